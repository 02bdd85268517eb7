import type { Scope, SessionAppendResult, SessionList, SessionMessage, SessionTokens, SessionView } from '#contracts';

export interface CreateSessionOptions {
  readonly metadata?: Record<string, unknown>;
  /**
   * The id to create it under (derived from the client's Idempotency-Key); when a session has it already, that
   * session is returned unchanged, so a create retried after its answer was lost makes no second session.
   */
  readonly id?: string;
}

export interface ReplaceMessagesOptions extends FencedWrite {
  readonly messages: readonly SessionMessage[];
  /** The version the caller read; the replace is refused with CONFLICT when it moved. */
  readonly expectedVersion: number;
  /** The token count of the new messages; stored at the new version. */
  readonly tokens?: Omit<SessionTokens, 'at_version'>;
}

/**
 * A held lease: its owner and its fencing token. Tokens grow with every new holder of one session, so a write that
 * carries an older token than the newest one handed out comes from a holder whose lease lapsed, and is refused.
 */
export interface SessionLease {
  readonly owner: string;
  readonly token: number;
}

/** Options of a write that a lease holder makes: with `fence`, the store refuses it once another holder took over. */
export interface FencedWrite {
  readonly fence?: SessionLease;
}

export interface ListSessionsOptions {
  readonly limit?: number;
  readonly offset?: number;
}

/**
 * Where sessions live: every call is scoped to a tenant and an agent. `version` moves with every change of the
 * messages (append, replace), so a compactor can replace them only if nobody appended since it read them.
 */
export interface SessionStore {
  create(scope: Scope, options?: CreateSessionOptions): Promise<SessionView>;
  /** NOT_FOUND when the session does not exist for this scope. */
  get(scope: Scope, id: string): Promise<SessionView>;
  /**
   * Appends atomically: concurrent appends from any instance never lose a message. With a fence, refused with
   * CONFLICT (details.reason `lease_lost`) when a newer lease holder exists, in the same atomic step as the write.
   */
  append(
    scope: Scope,
    id: string,
    messages: readonly SessionMessage[],
    options?: FencedWrite,
  ): Promise<SessionAppendResult>;
  /** Replaces all messages (compaction); returns the new version. */
  replace(scope: Scope, id: string, options: ReplaceMessagesOptions): Promise<number>;
  /** Sets the active skill; a named skill also joins `loaded_skills`, which compaction keeps. */
  setActiveSkill(scope: Scope, id: string, skill: string | null, options?: FencedWrite): Promise<void>;
  setTokens(scope: Scope, id: string, tokens: SessionTokens, options?: FencedWrite): Promise<void>;
  /** True when the session existed. */
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Deletes every session of the agent and whatever held them (folders, index keys); returns how many. */
  deleteAll(scope: Scope): Promise<number>;
  /** The agent a tenant's session belongs to (a session implies its agent); undefined when no agent has it. */
  locate(tenant: string, id: string): Promise<string | undefined>;
  /** Newest first. */
  list(scope: Scope, options?: ListSessionsOptions): Promise<SessionList>;
  /**
   * One holder at a time: the lease (with a new fencing token) when `owner` now holds it, undefined when another
   * does. Re-acquiring your own live lease extends it and keeps its token. NOT_FOUND when the session does not exist.
   */
  acquireLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<SessionLease | undefined>;
  renewLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(scope: Scope, id: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}
