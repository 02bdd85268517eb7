import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { retry } from '#retry';
import type { Embedder } from './embedder.js';

export interface OpenAiEmbedderOptions {
  /** Base URL without `/v1`, e.g. `https://api.openai.com`. */
  readonly url: string;
  readonly model: string;
  readonly apiKey?: string;
  /** The model's output dimension; when omitted, probed with one request by `init()`. */
  readonly dimension?: number;
  readonly timeoutMs?: number;
  readonly batchSize?: number;
  readonly maxRetries?: number;
  /** First backoff step; doubles per retry (capped, jittered) unless the server sends retry-after. */
  readonly backoffMs?: number;
}

interface EmbeddingsResponse {
  data: { embedding: number[]; index: number }[];
}

const RETRYABLE = (status: number) => status === 429 || status === 408 || status >= 500;
const MAX_RETRY_AFTER_MS = 30_000;

/** An OpenAI-compatible `POST /v1/embeddings` endpoint (OpenAI, vLLM, Ollama, TEI, LiteLLM...). */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly kind = 'semantic' as const;
  private dim: number | undefined;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.id = `openai:${options.model}`;
    this.dim = options.dimension;
    this.endpoint = `${options.url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/embeddings`;
  }

  get dimension(): number {
    if (this.dim === undefined)
      throw new AlfredError(ErrorCode.Internal, `${this.id}: dimension unknown until init() has run`);
    return this.dim;
  }

  /** Learns the dimension from one probe request when it was not configured. */
  async init(): Promise<this> {
    if (this.dim === undefined) this.dim = (await this.request(['dimension probe']))[0]!.length;
    return this;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const size = this.options.batchSize ?? 96;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.request(texts.slice(i, i + size))));
    if (this.dim !== undefined && out.some((v) => v.length !== this.dim)) {
      throw new AlfredError(
        ErrorCode.ModelError,
        `${this.id} returned vectors of ${out.find((v) => v.length !== this.dim)!.length} dims, expected ${this.dim}`,
      );
    }
    return out;
  }

  private request(input: readonly string[]): Promise<Float32Array[]> {
    let retryAfter: string | null = null;
    return retry(
      async (attempt) => {
        const res = await this.post(input);
        if (res.ok) return this.parse(await res.json(), input.length);
        retryAfter = res.headers.get('retry-after');
        throw this.failure(res.status, (await res.text().catch(() => '')).slice(0, 300), attempt);
      },
      {
        attempts: (this.options.maxRetries ?? 4) + 1,
        retryIf: (err) => RETRYABLE(((err as AlfredError).details as { status?: number } | undefined)?.status ?? 0),
        waitFor: () => retryAfterMs(retryAfter),
        backoff: { baseMs: this.options.backoffMs ?? 500, maxMs: MAX_RETRY_AFTER_MS },
      },
    );
  }

  private async post(input: readonly string[]): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    try {
      return await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, input, encoding_format: 'float' }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      const timedOut = err instanceof DOMException && err.name === 'TimeoutError';
      throw new AlfredError(
        timedOut ? ErrorCode.ServiceTimeout : ErrorCode.ServiceUnavailable,
        `embeddings endpoint ${this.endpoint} ${timedOut ? 'timed out' : 'is unreachable'}`,
        { embedder: this.id },
        { cause: err },
      );
    }
  }

  private parse(body: unknown, expected: number): Float32Array[] {
    const data = (body as EmbeddingsResponse | undefined)?.data;
    if (!Array.isArray(data) || data.length !== expected || data.some((d) => !Array.isArray(d?.embedding))) {
      throw new AlfredError(
        ErrorCode.ModelError,
        `${this.id}: malformed embeddings response (expected ${expected} embeddings)`,
      );
    }
    return [...data].sort((x, y) => x.index - y.index).map((d) => Float32Array.from(d.embedding));
  }

  /** The endpoint's refusal after `attempts` tries: details carry the status that decides whether to retry it. */
  private failure(status: number, detail: string, attempts: number): AlfredError {
    const code =
      status === 401 || status === 403
        ? ErrorCode.ModelNotConfigured
        : status === 429
          ? ErrorCode.RateLimited
          : ErrorCode.ModelError;
    const why =
      status === 401 || status === 403
        ? 'rejected the API key (check ALFRED_EMBEDDINGS_API_KEY)'
        : `answered HTTP ${status}`;
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    return new AlfredError(code, `embeddings endpoint ${this.endpoint} ${why}${tries}: ${detail}`, {
      embedder: this.id,
      status,
    });
  }
}

/** The server's Retry-After in milliseconds (capped), or undefined when it named none. */
function retryAfterMs(header: string | null): number | undefined {
  const seconds = header === null ? Number.NaN : Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : undefined;
}
