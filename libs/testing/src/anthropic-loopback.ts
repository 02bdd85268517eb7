import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoopbackPromptCache } from './anthropic-loopback-cache.js';
import {
  errorBody,
  errorTypeFor,
  loopbackTokenCount,
  messageJson,
  streamEvents,
  type InputTokens,
  type ScriptedError,
  type ScriptedMessage,
  type ScriptedReply,
} from './anthropic-loopback-wire.js';

export type { ScriptedBlock, ScriptedError, ScriptedMessage, ScriptedReply } from './anthropic-loopback-wire.js';

/** One request the loopback received, as it arrived. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: any;
  readonly at: number;
  /** Set when the client closed the connection before the answer was complete (an aborted request). */
  closedEarlyAt?: number;
}

export interface AnthropicLoopbackOptions {
  /** The key requests must carry (x-api-key or Authorization: Bearer); anything else gets a 401. */
  readonly apiKey?: string;
  /** Added before every answer, on top of a reply's own delayMs. */
  readonly latencyMs?: number;
  /** How many pieces each text / tool input is split into when streamed (default 3). */
  readonly streamPieces?: number;
  /** A request counted above this many tokens is refused as the API does: 400 "prompt is too long". */
  readonly contextWindow?: number;
  /** Simulate prompt caching (cache_control breakpoints, usage split into read / written / uncached tokens). */
  readonly promptCache?: { readonly minTokens?: number };
  /** The loopback port to listen on; a free one when absent. */
  readonly port?: number;
}

const MODEL = 'claude-sonnet-5-5';

/**
 * A loopback HTTP server speaking the Anthropic Messages API (POST /v1/messages, streaming or not, and
 * POST /v1/messages/count_tokens), answering from a per-test script. Drive it with the real SDK.
 */
export class AnthropicLoopback {
  /** Every request received, rejected ones included, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  readonly apiKey: string;
  private readonly queue: ScriptedReply[] = [];
  private readonly routes: Array<{ match: (body: any) => boolean; reply: (body: any) => ScriptedReply }> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private seq = 0;
  private readonly cache: LoopbackPromptCache | undefined;

  private constructor(
    private readonly server: Server,
    private readonly options: AnthropicLoopbackOptions,
  ) {
    this.apiKey = options.apiKey ?? 'sk-ant-loopback-key';
    this.cache = options.promptCache ? new LoopbackPromptCache(options.promptCache.minTokens) : undefined;
  }

  static async start(options: AnthropicLoopbackOptions = {}): Promise<AnthropicLoopback> {
    let self: AnthropicLoopback | undefined;
    const server = createServer((req, res) => void self?.handle(req, res));
    self = new AnthropicLoopback(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return self;
  }

  /** The base URL to give the SDK (`baseURL`). */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues replies, answered in order to the next POST /v1/messages requests. */
  script(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Answers every request whose body matches with `reply`, ahead of the script queue: for callers whose requests
   * interleave with the scripted ones in an order the test does not decide (e.g. a capability a turn's tool calls).
   */
  answer(match: (body: any) => boolean, reply: (body: any) => ScriptedReply): this {
    this.routes.push({ match, reply });
    return this;
  }

  /** Queues a plain text answer. */
  reply(text: string, extra: Partial<ScriptedMessage> = {}): this {
    return this.script({ content: [{ type: 'text', text }], ...extra });
  }

  /** Queues an error answer in the API's error format. */
  fail(status: number, extra: Partial<Omit<ScriptedError, 'kind' | 'status'>> = {}): this {
    return this.script({ kind: 'error', status, ...extra });
  }

  /** Scripted replies not yet used. */
  get pending(): number {
    return this.queue.length;
  }

  /** Requests to POST /v1/messages (count_tokens excluded). */
  get messageRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === '/v1/messages');
  }

  clear(): void {
    this.queue.length = 0;
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `req_loopback_${++this.seq}`;
    res.setHeader('request-id', requestId);
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://loopback').pathname;
    const body = safeJson(raw) as Record<string, unknown> | undefined;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers, body, at: Date.now() };
    this.requests.push(recorded);
    res.once('close', () => {
      if (!res.writableFinished) recorded.closedEarlyAt = Date.now();
    });

    if (!this.authorised(headers)) {
      return sendJson(res, 401, errorBody('authentication_error', 'invalid x-api-key', requestId));
    }
    if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      return sendJson(res, 404, errorBody('not_found_error', `no route ${req.method} ${path}`, requestId));
    }
    if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendJson(res, 400, errorBody('invalid_request_error', 'request body is not JSON', requestId));
    }
    if (path === '/v1/messages/count_tokens') {
      return sendJson(res, 200, { input_tokens: loopbackTokenCount(body) });
    }
    const counted = loopbackTokenCount(body);
    if (this.options.contextWindow !== undefined && counted > this.options.contextWindow) {
      return sendJson(
        res,
        400,
        errorBody(
          'invalid_request_error',
          `prompt is too long: ${counted} tokens > ${this.options.contextWindow} maximum`,
          requestId,
        ),
      );
    }
    const reply = this.routes.find((r) => r.match(body))?.reply(body) ?? this.queue.shift();
    if (!reply) {
      return sendJson(res, 400, errorBody('invalid_request_error', 'loopback: no scripted reply left', requestId));
    }
    await this.delay((this.options.latencyMs ?? 0) + (reply.delayMs ?? 0));
    if (res.destroyed) return;
    if (reply.kind === 'error') return this.sendError(res, reply, requestId);
    const model = typeof body.model === 'string' ? body.model : MODEL;
    const msgId = `msg_${randomUUID().replaceAll('-', '')}`;
    const inputTokens = this.cache ? this.cache.usage(body) : counted;
    if (body.stream === true) return this.sendStream(res, reply, model, msgId, inputTokens);
    sendJson(res, 200, messageJson(reply, model, msgId, inputTokens));
  }

  private authorised(headers: Record<string, string>): boolean {
    const bearer = headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
    return headers['x-api-key'] === this.apiKey || bearer === this.apiKey;
  }

  private sendError(res: ServerResponse, reply: ScriptedError, requestId: string): void {
    if (reply.retryAfter !== undefined) res.setHeader('retry-after', String(reply.retryAfter));
    const type = reply.errorType ?? errorTypeFor(reply.status);
    sendJson(res, reply.status, errorBody(type, reply.message ?? `scripted ${type}`, requestId));
  }

  private async sendStream(
    res: ServerResponse,
    reply: ScriptedMessage,
    model: string,
    msgId: string,
    inputTokens: InputTokens,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const { event, data } of streamEvents(
      reply,
      model,
      msgId,
      inputTokens,
      reply.streamPieces ?? this.options.streamPieces ?? 3,
    )) {
      if (res.destroyed) return;
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      await this.delay(reply.eventDelayMs ?? 0);
    }
    res.end();
  }

  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
