// The Anthropic Messages API wire format as a loopback server speaks it: message JSON, SSE events, error bodies.

/** A content block a scripted reply returns. */
export type ScriptedBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly id?: string; readonly name: string; readonly input: Record<string, unknown> };

export interface ScriptedUsage {
  readonly input_tokens?: number;
  readonly output_tokens?: number;
  readonly cache_creation_input_tokens?: number;
  readonly cache_read_input_tokens?: number;
}

/** A successful reply; streamed as SSE when the request asked for `stream: true`. */
export interface ScriptedMessage {
  readonly kind?: 'message';
  readonly content: readonly ScriptedBlock[];
  readonly stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';
  readonly usage?: ScriptedUsage;
  readonly model?: string;
  readonly delayMs?: number;
  /** Streamed replies only: send an SSE `error` event of this type after message_start instead of the content. */
  readonly streamErrorType?: string;
  /** Streamed replies only: how many pieces each text is cut into (overrides the loopback's streamPieces). */
  readonly streamPieces?: number;
  /** Streamed replies only: the pause between two SSE events, as a model that writes slowly. */
  readonly eventDelayMs?: number;
}

/** An HTTP error reply in the API's error format. */
export interface ScriptedError {
  readonly kind: 'error';
  readonly status: number;
  readonly errorType?: string;
  readonly message?: string;
  /** Seconds, sent as the `retry-after` header. */
  readonly retryAfter?: number | string;
  readonly delayMs?: number;
}

export type ScriptedReply = ScriptedMessage | ScriptedError;

export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function errorTypeFor(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function errorBody(type: string, message: string, requestId: string) {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

/** A request's input tokens: a plain count, or split into uncached, cache-written and cache-read tokens. */
export type InputTokens =
  | number
  | { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

function usageOf(reply: ScriptedMessage, input: InputTokens) {
  const base =
    typeof input === 'number'
      ? { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      : input;
  return {
    input_tokens: reply.usage?.input_tokens ?? base.input_tokens,
    output_tokens: reply.usage?.output_tokens ?? outputEstimate(reply.content),
    cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? base.cache_creation_input_tokens,
    cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? base.cache_read_input_tokens,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: null,
  };
}

function outputEstimate(content: readonly ScriptedBlock[]): number {
  const chars = content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : JSON.stringify(b.input).length), 0);
  return Math.max(1, Math.ceil(chars / 4));
}

type WireBlock =
  | { type: 'text'; text: string; citations: null }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function blockOf(block: ScriptedBlock, index: number, msgId: string): WireBlock {
  if (block.type === 'text') return { type: 'text', text: block.text, citations: null };
  return { type: 'tool_use', id: block.id ?? `toolu_${msgId.slice(4)}_${index}`, name: block.name, input: block.input };
}

/** The non-streaming Message object. */
export function messageJson(reply: ScriptedMessage, model: string, msgId: string, inputTokens: InputTokens) {
  const hasTool = reply.content.some((b) => b.type === 'tool_use');
  return {
    id: msgId,
    type: 'message',
    role: 'assistant',
    model: reply.model ?? model,
    content: reply.content.map((b, i) => blockOf(b, i, msgId)),
    stop_reason: reply.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usageOf(reply, inputTokens),
  };
}

/** Splits a string into `parts` roughly equal, non-empty pieces (fewer when the string is short). */
export function splitInPieces(s: string, parts: number): string[] {
  if (s.length === 0) return [];
  const size = Math.max(1, Math.ceil(s.length / parts));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function blockEvents(block: WireBlock, index: number, pieces: number): SseEvent[] {
  const events: SseEvent[] = [];
  if (block.type === 'text') {
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } },
    });
    for (const text of splitInPieces(block.text, pieces)) {
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
      });
    }
  } else {
    const start = { type: 'tool_use', id: block.id, name: block.name, input: {} };
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
    for (const partial_json of splitInPieces(JSON.stringify(block.input), pieces)) {
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
      });
    }
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return events;
}

/** The SSE event sequence of a streamed reply, in the order the API sends it. */
export function streamEvents(
  reply: ScriptedMessage,
  model: string,
  msgId: string,
  inputTokens: InputTokens,
  pieces: number,
): SseEvent[] {
  const full = messageJson(reply, model, msgId, inputTokens);
  const start = { ...full, content: [], stop_reason: null, usage: { ...full.usage, output_tokens: 1 } };
  const events: SseEvent[] = [
    { event: 'message_start', data: { type: 'message_start', message: start } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  if (reply.streamErrorType) {
    events.push({ event: 'error', data: errorBody(reply.streamErrorType, `scripted ${reply.streamErrorType}`, msgId) });
    return events;
  }
  full.content.forEach((block, i) => {
    events.push(...blockEvents(block, i, pieces));
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: full.stop_reason, stop_sequence: null, stop_details: null, container: null },
      usage: { output_tokens: full.usage.output_tokens, input_tokens: full.usage.input_tokens },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The loopback's deterministic token count: about four characters of request JSON per token. */
export function loopbackTokenCount(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  const chars = JSON.stringify([body.system ?? '', body.messages ?? [], body.tools ?? []]).length;
  return Math.max(1, Math.ceil(chars / 4));
}
