import { z } from 'zod';
import { AgentName, IsoTimestamp } from './common.js';

export const SESSION_APPEND_MAX = 500;
export const SESSION_TEXT_MAX = 1_000_000;
/** Characters of the first message a session summary shows. */
export const FIRST_MESSAGE_MAX = 200;

/** Session ids are opaque, URL- and key-safe tokens (the stores mint UUIDs). */
export const SessionId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'session ids are 1-64 letters, digits, _ or -');

const Text = z.string().max(SESSION_TEXT_MAX);
const CacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });

export const TextBlock = z.strictObject({
  type: z.literal('text'),
  text: Text,
  cache_control: CacheControl.optional(),
});
export type TextBlock = z.infer<typeof TextBlock>;

export const ToolUseBlock = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(128),
  name: z.string().min(1).max(128),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl.optional(),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;

export const ToolResultBlock = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(128),
  content: z.union([Text, z.array(TextBlock)]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl.optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

export const ContentBlock = z.discriminatedUnion('type', [TextBlock, ToolUseBlock, ToolResultBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const MessageRole = z.enum(['user', 'assistant']);
export type MessageRole = z.infer<typeof MessageRole>;

/** One message in the Anthropic Messages API shape: tool calls come from the assistant, results from the user. */
export const SessionMessage = z
  .strictObject({ role: MessageRole, content: z.union([Text, z.array(ContentBlock).min(1)]) })
  .superRefine((msg, ctx) => {
    if (typeof msg.content === 'string') return;
    msg.content.forEach((block, i) => {
      if (block.type === 'tool_use' && msg.role !== 'assistant') {
        ctx.addIssue({ code: 'custom', path: ['content', i], message: 'tool_use blocks belong to assistant messages' });
      }
      if (block.type === 'tool_result' && msg.role !== 'user') {
        ctx.addIssue({ code: 'custom', path: ['content', i], message: 'tool_result blocks belong to user messages' });
      }
    });
  });
export type SessionMessage = z.infer<typeof SessionMessage>;

export const SessionMetadata = z.record(z.string().max(128), z.unknown());

/** The last token count of a session's messages, and the version it was taken at (stale when it differs). */
export const SessionTokens = z.object({
  count: z.number().int().min(0),
  source: z.enum(['model', 'estimate']),
  at_version: z.number().int().min(0),
});
export type SessionTokens = z.infer<typeof SessionTokens>;

/** POST /sessions body. */
export const SessionCreateBody = z.strictObject({
  agent: AgentName.optional(),
  metadata: SessionMetadata.optional(),
});
export type SessionCreateBody = z.infer<typeof SessionCreateBody>;

/** POST /sessions/{id}/messages body. */
export const SessionAppendBody = z.strictObject({
  messages: z.array(SessionMessage).min(1, 'messages cannot be empty').max(SESSION_APPEND_MAX),
});
export type SessionAppendBody = z.infer<typeof SessionAppendBody>;

/** A session without its messages, as lists show it. */
export const SessionSummary = z.object({
  id: SessionId,
  agent: AgentName,
  version: z.number().int().min(0),
  message_count: z.number().int().min(0),
  active_skill: z.string().nullable(),
  loaded_skills: z.array(z.string()),
  metadata: SessionMetadata,
  tokens: SessionTokens.nullable(),
  /** The start of the first message's text (what the conversation was about), null while it has none. */
  first_message: z
    .string()
    .max(FIRST_MESSAGE_MAX + 1)
    .nullable()
    .optional(),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
});
export type SessionSummary = z.infer<typeof SessionSummary>;

/** A session as the API shows it. */
export const SessionView = SessionSummary.extend({ messages: z.array(SessionMessage) });
export type SessionView = z.infer<typeof SessionView>;

export const SessionAppendResult = z.object({
  id: SessionId,
  version: z.number().int(),
  message_count: z.number().int(),
  appended: z.number().int(),
});
export type SessionAppendResult = z.infer<typeof SessionAppendResult>;

export const SessionList = z.object({ sessions: z.array(SessionSummary), total: z.number().int() });
export type SessionList = z.infer<typeof SessionList>;

export const SessionDeleted = z.object({ id: SessionId, deleted: z.literal(true) });
