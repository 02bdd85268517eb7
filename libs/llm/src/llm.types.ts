import type { SessionMessage, TextBlock, ToolUseBlock } from '#contracts';

/** Messages go to the model in the sessions' (Anthropic) shape. */
export type LlmMessage = SessionMessage;

/** A tool offered to the model: name, description and a JSON Schema of its input. */
export interface LlmTool {
  readonly name: string;
  readonly description?: string;
  readonly input_schema: { readonly type: 'object'; readonly [key: string]: unknown };
}

/**
 * The system prompt split for prompt caching: `stable` parts (core instructions, skill index) form the cached
 * prefix, `volatile` (per-turn context) follows it uncached.
 */
export interface SystemPrompt {
  readonly stable: readonly string[];
  readonly volatile?: string;
}

export interface CompleteRequest {
  readonly system?: SystemPrompt | string;
  readonly messages: readonly LlmMessage[];
  readonly tools?: readonly LlmTool[];
  readonly maxTokens: number;
  /** Mark the last stable system block with cache_control (default true). */
  readonly cacheSystem?: boolean;
  readonly model?: string;
  readonly temperature?: number;
}

export interface CountTokensRequest {
  readonly system?: SystemPrompt | string;
  readonly messages: readonly LlmMessage[];
  readonly tools?: readonly LlmTool[];
  readonly model?: string;
}

export interface LlmUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheCreationInputTokens: number;
  readonly cacheReadInputTokens: number;
}

/** The model's answer, normalised: only text and tool_use blocks are kept. */
export interface Completion {
  readonly id: string;
  readonly model: string;
  readonly content: ReadonlyArray<TextBlock | ToolUseBlock>;
  /** All text blocks joined. */
  readonly text: string;
  readonly toolUses: readonly ToolUseBlock[];
  readonly stopReason: string | null;
  readonly usage: LlmUsage;
}

/** Normalised streaming events, in the order the model produced them. */
export type LlmStreamEvent =
  | { readonly type: 'text_delta'; readonly text: string }
  | { readonly type: 'tool_use_start'; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool_use'; readonly index: number; readonly block: ToolUseBlock }
  | { readonly type: 'message_stop'; readonly completion: Completion }
  /** An attempt failed before any output and another follows after `delayMs` (nothing was streamed yet). */
  | {
      readonly type: 'retry';
      readonly attempt: number;
      readonly maxAttempts: number;
      readonly delayMs: number;
      readonly error: { code: string; message: string };
    };

/** How one streamed call may be stopped: aborting the signal aborts the HTTP request and any retry not yet made. */
export interface StreamOptions {
  readonly signal?: AbortSignal;
}

/** A token count and where it came from. */
export interface TokenMeasure {
  readonly tokens: number;
  readonly source: 'model' | 'estimate';
}
