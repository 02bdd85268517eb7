import type { ContentBlock, SessionMessage } from '#contracts';

/**
 * The estimate used when no model is configured (or as a quick pre-check), stated so callers can say so:
 * - text: one token per 4 characters, rounded up (English prose averages ~4 chars/token);
 * - each message: +4 tokens of role/framing overhead;
 * - tool_use / tool_result blocks: their JSON (name, id, input / content) at the same 4 chars/token, +8 framing;
 * - tools: their JSON definition at 4 chars/token; a system prompt: its text plus 4.
 */
const CHARS_PER_TOKEN = 4;
const MESSAGE_OVERHEAD = 4;
const TOOL_BLOCK_OVERHEAD = 8;

/** A system prompt as #llm sends it: its cached parts and what follows them uncached. */
interface SystemText {
  readonly stable: readonly string[];
  readonly volatile?: string;
}

/** A request as #llm sends it (messages in the sessions' shape, tools as their JSON definitions). */
export interface EstimateInput {
  readonly system?: SystemText | string;
  readonly messages?: readonly SessionMessage[];
  readonly tools?: readonly object[];
}

function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function blockTokens(block: ContentBlock): number {
  if (block.type === 'text') return textTokens(block.text);
  if (block.type === 'tool_use')
    return TOOL_BLOCK_OVERHEAD + textTokens(JSON.stringify({ id: block.id, name: block.name, input: block.input }));
  const content = typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '');
  return TOOL_BLOCK_OVERHEAD + textTokens(block.tool_use_id) + textTokens(content);
}

function messageTokens(message: SessionMessage): number {
  const body =
    typeof message.content === 'string'
      ? textTokens(message.content)
      : message.content.reduce((n, b) => n + blockTokens(b), 0);
  return MESSAGE_OVERHEAD + body;
}

function systemTokens(system: SystemText | string): number {
  const text = typeof system === 'string' ? system : [...system.stable, system.volatile ?? ''].join('');
  return text.length === 0 ? 0 : MESSAGE_OVERHEAD + textTokens(text);
}

/** Estimates tokens of a text, a message list, or a whole request (the rule above). */
export function estimateTokens(input: string | readonly SessionMessage[] | EstimateInput): number {
  if (typeof input === 'string') return textTokens(input);
  if (Array.isArray(input)) return (input as readonly SessionMessage[]).reduce((n, m) => n + messageTokens(m), 0);
  const req = input as EstimateInput;
  const messages = (req.messages ?? []).reduce((n, m) => n + messageTokens(m), 0);
  const tools = (req.tools ?? []).reduce((n, t) => n + textTokens(JSON.stringify(t)), 0);
  return messages + tools + (req.system ? systemTokens(req.system) : 0);
}
