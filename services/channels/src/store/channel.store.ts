/** A confirmation the agent asked for in a chat, waiting for a button tap. */
export interface PendingConfirmation {
  readonly agent: string;
  readonly session_id: string;
}

/** What a chat (or one topic of a forum group) is talking to. */
export interface ChatState {
  /** The agent the chat talks to now. */
  readonly agent: string;
  /** The chat's current session of each agent it has talked to (switching back resumes it). */
  readonly sessions: Readonly<Record<string, string>>;
  /** The last memory `/remember` stored from this chat, for a bare `/forget`. */
  readonly last_memory?: { readonly agent: string; readonly id: string };
  /** The candidates a `/forget TEXT` offered as buttons. */
  readonly forget?: { readonly nonce: string; readonly agent: string; readonly ids: readonly string[] };
  readonly confirmations: Readonly<Record<string, PendingConfirmation>>;
}

/**
 * How far the handling of one Telegram update got: written before each step that must not run twice, so a
 * redelivered update (after a crash) resumes instead of starting over.
 */
export interface UpdateRecord {
  readonly status: 'running' | 'done';
  readonly turn_id?: string;
  readonly agent?: string;
  readonly session_id?: string;
  /** The session's version before the turn: a higher one means the turn wrote its result. */
  readonly version_before?: number;
  /** The bot's reply messages so far (a resumed turn edits these instead of sending new ones). */
  readonly reply_message_ids?: readonly number[];
  /** How many of those hold text written before a confirmation (a resumed reply leaves them as they are). */
  readonly reply_sealed?: number;
}

/**
 * The channels service's own state, per bot: chats, handled updates (for deduplication) and the poller lease.
 * Files under the data dir embedded; Redis when REDIS_URL is set, so every instance sees the same.
 */
export interface ChannelStore {
  getChat(chat: string): Promise<ChatState | undefined>;
  /** Read-modify-write of one chat, atomic against every other writer. */
  updateChat(chat: string, change: (current: ChatState | undefined) => ChatState): Promise<ChatState>;
  getUpdate(updateId: number): Promise<UpdateRecord | undefined>;
  /** Stores the record; `done` records are kept for `retentionMs` (Telegram stops redelivering long before). */
  putUpdate(updateId: number, record: UpdateRecord, retentionMs: number): Promise<void>;
  /** One poller per bot at a time: true when `owner` holds the lease now (taking it, or extending its own). */
  holdPoller(owner: string, ttlMs: number): Promise<boolean>;
  releasePoller(owner: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a handled update's id is remembered (Telegram keeps an unconfirmed update for 24 hours). */
export const UPDATE_RETENTION_MS = 48 * 3_600_000;

export function emptyChat(agent: string): ChatState {
  return { agent, sessions: {}, confirmations: {} };
}
