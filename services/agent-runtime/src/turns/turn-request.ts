import type { ContentBlock, SessionMessage } from '#contracts';
import type { CompleteRequest, LlmTool, SystemPrompt } from '#llm';

/** What one model call of a turn is built from. */
export interface TurnRequestParts {
  readonly system: SystemPrompt;
  readonly tools: readonly LlmTool[];
  /** The session's messages before this turn (or since the last fold). */
  readonly history: readonly SessionMessage[];
  /** This turn's material (relevant memories, environment), after the history. */
  readonly material: string;
  /** This turn's messages so far: the user's message, then whole rounds. */
  readonly pending: readonly SessionMessage[];
  /** How many messages the previous call of this turn sent (its growing tail's breakpoint), if any. */
  readonly previousLength?: number;
  readonly maxTokens: number;
}

const EPHEMERAL = { type: 'ephemeral' } as const;

function withBreakpoint(message: SessionMessage): SessionMessage {
  const blocks: ContentBlock[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content];
  blocks[blocks.length - 1] = { ...blocks.at(-1)!, cache_control: EPHEMERAL };
  return { role: message.role, content: blocks };
}

/**
 * One model call of a turn, laid out for prompt caching with at most four breakpoints: the tools and the system
 * prompt (cache_control on its last block), the conversation before this turn (the stable prefix), the previous
 * call's end and this call's end (the growing tail: each call reads what the one before wrote, even when a round
 * added more blocks than the API looks back over). This turn's material follows the stable prefix as its own user
 * message (the API joins consecutive user messages), so it never breaks the cached conversation.
 */
export function buildTurnRequest(p: TurnRequestParts): CompleteRequest {
  const messages: SessionMessage[] = [...p.history, { role: 'user', content: p.material }, ...p.pending];
  const marks = new Set<number>([messages.length - 1]);
  if (p.history.length > 0) marks.add(p.history.length - 1);
  if (p.previousLength !== undefined && p.previousLength > p.history.length + 1 && p.previousLength < messages.length)
    marks.add(p.previousLength - 1);
  return {
    system: p.system,
    tools: p.tools,
    messages: messages.map((m, i) => (marks.has(i) ? withBreakpoint(m) : m)),
    maxTokens: p.maxTokens,
  };
}
