import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { mapLlmError, modelNotConfigured } from './llm-error.mapper.js';
import { observeCompletion, observedStream, observeFailure } from './llm-metrics.js';
import { isRetryable, serverRetryDelayMs } from './llm-retry.js';
import { normaliseStream, toCompletion } from './llm-stream.js';
import type {
  Completion,
  CompleteRequest,
  CountTokensRequest,
  LlmStreamEvent,
  LlmTool,
  StreamOptions,
  SystemPrompt,
  TokenMeasure,
} from './llm.types.js';
import { DEFAULT_MODEL } from '#config';
import { Backoff, sleep } from '#retry';
import { estimateTokens } from '#text';

export { DEFAULT_MODEL };
export const DEFAULT_BASE_URL = 'https://api.anthropic.com';

export interface LlmClientOptions {
  /** Without a key the client is not configured: every call fails with MODEL_NOT_CONFIGURED and sends nothing. */
  readonly apiKey?: string;
  readonly baseUrl?: string;
  readonly model?: string;
  /** Retries of 408/409/429/5xx and connection failures, honouring retry-after (default 3). */
  readonly maxRetries?: number;
  /** Per attempt (default 120 s). */
  readonly timeoutMs?: number;
}

/** Waits between a stream's attempts when the server names none (the SDK's own: 0.5 s doubling to 8 s). */
const RETRY_BACKOFF = { baseMs: 500, maxMs: 8_000 };

// Statuses the SDK retries on its own; an error with one of these has used every attempt.
const RETRIED_STATUSES = new Set([408, 409, 429]);

/** Builds the system blocks: cache_control on the last stable block makes the stable prefix cacheable. */
export function buildSystem(
  system: SystemPrompt | string | undefined,
  cache: boolean,
): string | TextBlockParam[] | undefined {
  if (system === undefined || typeof system === 'string') return system || undefined;
  const stable = system.stable.filter((s) => s.length > 0);
  const blocks: TextBlockParam[] = stable.map((text, i) =>
    cache && i === stable.length - 1
      ? { type: 'text', text, cache_control: { type: 'ephemeral' } }
      : { type: 'text', text },
  );
  if (system.volatile) blocks.push({ type: 'text', text: system.volatile });
  return blocks.length > 0 ? blocks : undefined;
}

function toTools(tools: readonly LlmTool[] | undefined): Tool[] | undefined {
  return tools && tools.length > 0 ? (tools as unknown as Tool[]) : undefined;
}

/** Claude through the Anthropic SDK, with Alfred's errors, prompt caching and a stated token estimate. */
export class LlmClient {
  readonly model: string;
  readonly baseUrl: string;
  readonly maxRetries: number;
  private readonly client: Anthropic | undefined;

  constructor(options: LlmClientOptions) {
    this.model = options.model ?? DEFAULT_MODEL;
    this.baseUrl = options.baseUrl ?? DEFAULT_BASE_URL;
    this.maxRetries = options.maxRetries ?? 3;
    this.client = options.apiKey
      ? new Anthropic({
          apiKey: options.apiKey,
          baseURL: this.baseUrl,
          maxRetries: this.maxRetries,
          timeout: options.timeoutMs ?? 120_000,
        })
      : undefined;
  }

  /** True when an API key is set; without one, callers use their deterministic fallbacks. */
  get isConfigured(): boolean {
    return this.client !== undefined;
  }

  /** One non-streaming completion. */
  async complete(req: CompleteRequest): Promise<Completion> {
    const client = this.requireClient();
    const model = req.model ?? this.model;
    try {
      const completion = toCompletion(await client.messages.create({ ...this.params(req), stream: false }));
      observeCompletion(model, completion);
      return completion;
    } catch (err) {
      const mapped = this.mapError(err);
      observeFailure(model, mapped);
      throw mapped;
    }
  }

  /**
   * A streamed completion as normalised events; errors surface from the iteration as AlfredErrors. Retries are
   * made here, not in the SDK, so each is announced (a `retry` event) and an abort stops the request and every
   * retry at once. An attempt is retried only before it streamed anything. Ends early (no message) when aborted.
   */
  stream(req: CompleteRequest, options: StreamOptions = {}): AsyncIterable<LlmStreamEvent> {
    return observedStream(req.model ?? this.model, this.attempts(this.requireClient(), req, options.signal));
  }

  private async *attempts(
    client: Anthropic,
    req: CompleteRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<LlmStreamEvent> {
    const backoff = new Backoff(RETRY_BACKOFF);
    for (let attempt = 1; !signal?.aborted; attempt++) {
      const sdk = client.messages.stream(this.params(req), { signal, maxRetries: 0 });
      let streamed = false;
      try {
        for await (const event of normaliseStream(sdk, (err) => err)) {
          streamed = true;
          yield event;
        }
        return;
      } catch (err) {
        if (signal?.aborted) return;
        const error = mapLlmError(err, { attempts: attempt, baseUrl: this.baseUrl });
        if (streamed || attempt > this.maxRetries || !isRetryable(err)) throw error;
        const delayMs = serverRetryDelayMs(err) ?? backoff.next();
        yield {
          type: 'retry',
          attempt,
          maxAttempts: this.maxRetries + 1,
          delayMs,
          error: { code: error.code, message: error.message },
        };
        await sleep(delayMs, signal);
      }
    }
  }

  /** Input tokens of a request, from the model's count-tokens endpoint. */
  async countTokens(req: CountTokensRequest): Promise<number> {
    const client = this.requireClient();
    try {
      const res = await client.messages.countTokens({
        model: req.model ?? this.model,
        messages: req.messages as MessageParam[],
        system: buildSystem(req.system, false),
        tools: toTools(req.tools),
      });
      return res.input_tokens;
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** The model's count when configured, else the stated estimate (#text's estimateTokens). */
  async measure(req: CountTokensRequest): Promise<TokenMeasure> {
    if (!this.isConfigured) return { tokens: estimateTokens(req), source: 'estimate' };
    return { tokens: await this.countTokens(req), source: 'model' };
  }

  private params(req: CompleteRequest) {
    return {
      model: req.model ?? this.model,
      max_tokens: req.maxTokens,
      messages: req.messages as MessageParam[],
      system: buildSystem(req.system, req.cacheSystem ?? true),
      tools: toTools(req.tools),
      ...(req.temperature === undefined ? {} : { temperature: req.temperature }),
    };
  }

  private requireClient(): Anthropic {
    if (!this.client) throw modelNotConfigured();
    return this.client;
  }

  private mapError(err: unknown) {
    const status = (err as { status?: unknown }).status;
    const retried = typeof status === 'number' && (RETRIED_STATUSES.has(status) || status >= 500);
    return mapLlmError(err, { attempts: retried ? this.maxRetries + 1 : 1, baseUrl: this.baseUrl });
  }
}
