import { randomUUID } from 'node:crypto';
import {
  ErrorCode,
  FIRST_MESSAGE_MAX,
  SessionId,
  type Scope,
  type SessionMessage,
  type SessionSummary,
  type SessionView,
} from '#contracts';
import { AlfredError } from '#errors';

/** Refuses ids that are not session-id shaped before they reach a key or a path. */
export function checkSessionId(id: string): void {
  if (!SessionId.safeParse(id).success) throw AlfredError.notFound('session', id);
}

export function newSession(
  scope: Scope,
  metadata: Record<string, unknown> = {},
  id: string = randomUUID(),
): SessionView {
  const now = new Date().toISOString();
  return {
    id,
    agent: scope.agent,
    version: 0,
    message_count: 0,
    active_skill: null,
    loaded_skills: [],
    metadata,
    tokens: null,
    first_message: null,
    created_at: now,
    updated_at: now,
    messages: [],
  };
}

export function summaryOf(view: SessionView): SessionSummary {
  const { messages: _messages, ...summary } = view;
  return summary;
}

/** The start of a message's text, whitespace collapsed, cut with an ellipsis: what a list of sessions shows. */
export function firstMessageText(message: SessionMessage | undefined): string | null {
  if (!message) return null;
  const raw =
    typeof message.content === 'string'
      ? message.content
      : message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' ');
  const text = raw.replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return text.length > FIRST_MESSAGE_MAX ? `${text.slice(0, FIRST_MESSAGE_MAX - 1).trimEnd()}…` : text;
}

export function versionConflict(id: string, expected: number, actual: number): AlfredError {
  return new AlfredError(
    ErrorCode.Conflict,
    `session ${id} changed since it was read (expected version ${expected}, now ${actual})`,
    { id, expected_version: expected, version: actual },
  );
}

/** A file- and key-safe form of a tenant id: percent-encoding, with dots encoded too (no `..`). */
export function safeSegment(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

export function page<T>(items: readonly T[], offset = 0, limit = 100): T[] {
  return items.slice(offset, offset + limit);
}
