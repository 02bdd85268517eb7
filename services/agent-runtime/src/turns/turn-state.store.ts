import { isKvConflict, keyToken, type KvStore } from '#kv';
import type { Scope } from '#contracts';

export interface CurrentTurn {
  readonly turn_id: string;
  readonly worker: string;
}

export interface PendingConfirmation {
  readonly request_id: string;
  readonly turn_id: string;
  readonly skill: string;
}

/** The first answer wins; a request its turn stopped waiting for is `closed` with why (cancelled, timeout…). */
export type AnswerOutcome = { readonly turn_id: string } | 'unknown' | 'answered' | { readonly closed: string };

/**
 * What every instance must see of running turns (the worker running a turn may not be the one a cancel or a
 * confirmation reaches): the session's current turn, its cancel flag, and pending confirmations with answers.
 * Entries expire (a dead worker's turn disappears with its lease).
 */
export interface TurnStateStore {
  setCurrent(scope: Scope, sessionId: string, turn: CurrentTurn, ttlMs: number): Promise<void>;
  current(scope: Scope, sessionId: string): Promise<CurrentTurn | undefined>;
  clearCurrent(scope: Scope, sessionId: string, turnId: string): Promise<void>;
  requestCancel(turnId: string, ttlMs: number): Promise<void>;
  cancelRequested(turnId: string): Promise<boolean>;
  openConfirmation(scope: Scope, sessionId: string, pending: PendingConfirmation, ttlMs: number): Promise<void>;
  /** Records the answer once: a second answer is `answered`, an unknown request `unknown`. */
  answer(scope: Scope, sessionId: string, requestId: string, approve: boolean): Promise<AnswerOutcome>;
  answerOf(scope: Scope, sessionId: string, requestId: string): Promise<boolean | undefined>;
  /** The turn stopped waiting (it ended, or the request timed out): a later answer is refused with the reason. */
  closeConfirmation(scope: Scope, sessionId: string, requestId: string, reason: string): Promise<void>;
  close(): Promise<void>;
}

/** Upper bound of every entry's life in the bucket (each also carries its own expiry, checked on read). */
export const TURN_STATE_TTL_MS = 24 * 3_600_000;

const MAX_ATTEMPTS = 50;

/** An entry with the time it expires at (its own TTL; the bucket's is only the upper bound). */
type Expiring<T> = T & { readonly expiresAt: number };
type StoredConfirmation = Expiring<PendingConfirmation & { readonly answer: boolean | null; readonly closed?: string }>;

const base = (scope: Scope, sessionId: string) => `${keyToken(scope.tenant)}.${scope.agent}.${sessionId}`;
const currentKey = (scope: Scope, sessionId: string) => `cur.${base(scope, sessionId)}`;
const cancelKey = (turnId: string) => `cancel.${keyToken(turnId)}`;
const confirmKey = (scope: Scope, sessionId: string, requestId: string) =>
  `confirm.${base(scope, sessionId)}.${keyToken(requestId)}`;

/**
 * Turn state on the key-value port: Redis in the distributed shape (every agent-runtime instance sees it), the
 * process's memory embedded (turns do not outlive their process there). Each entry carries its own expiry; an answer
 * and a close of a confirmation are compare-and-sets, so the first of them wins.
 */
export class KvTurnStateStore implements TurnStateStore {
  constructor(private readonly kv: KvStore) {}

  async setCurrent(scope: Scope, sessionId: string, turn: CurrentTurn, ttlMs: number): Promise<void> {
    await this.kv.put(currentKey(scope, sessionId), JSON.stringify({ ...turn, expiresAt: Date.now() + ttlMs }));
  }

  async current(scope: Scope, sessionId: string): Promise<CurrentTurn | undefined> {
    const turn = (await this.live<CurrentTurn>(currentKey(scope, sessionId)))?.value;
    return turn && { turn_id: turn.turn_id, worker: turn.worker };
  }

  async clearCurrent(scope: Scope, sessionId: string, turnId: string): Promise<void> {
    const found = await this.live<CurrentTurn>(currentKey(scope, sessionId));
    if (found?.value.turn_id !== turnId) return;
    await this.kv
      .delete(currentKey(scope, sessionId), { expected: found.revision })
      .catch((err: unknown) => (isKvConflict(err) ? undefined : Promise.reject(err)));
  }

  async requestCancel(turnId: string, ttlMs: number): Promise<void> {
    await this.kv.put(cancelKey(turnId), JSON.stringify({ expiresAt: Date.now() + ttlMs }));
  }

  async cancelRequested(turnId: string): Promise<boolean> {
    return (await this.live(cancelKey(turnId))) !== undefined;
  }

  async openConfirmation(scope: Scope, sessionId: string, pending: PendingConfirmation, ttlMs: number): Promise<void> {
    const stored: StoredConfirmation = { ...pending, answer: null, expiresAt: Date.now() + ttlMs };
    await this.kv.put(confirmKey(scope, sessionId, pending.request_id), JSON.stringify(stored));
  }

  async answer(scope: Scope, sessionId: string, requestId: string, approve: boolean): Promise<AnswerOutcome> {
    const before = await this.settle(confirmKey(scope, sessionId, requestId), (pending) =>
      pending.closed === undefined && pending.answer === null ? { ...pending, answer: approve } : undefined,
    );
    if (!before) return 'unknown';
    if (before.closed !== undefined) return { closed: before.closed };
    return before.answer === null ? { turn_id: before.turn_id } : 'answered';
  }

  async answerOf(scope: Scope, sessionId: string, requestId: string): Promise<boolean | undefined> {
    const pending = (await this.live<StoredConfirmation>(confirmKey(scope, sessionId, requestId)))?.value;
    return pending?.closed === undefined ? (pending?.answer ?? undefined) : undefined;
  }

  async closeConfirmation(scope: Scope, sessionId: string, requestId: string, reason: string): Promise<void> {
    await this.settle(confirmKey(scope, sessionId, requestId), (pending) =>
      pending.answer === null && pending.closed === undefined ? { ...pending, closed: reason } : undefined,
    );
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  /**
   * Compare-and-set of a live confirmation: `next` gives its new state (undefined: leave it as it is). Returns the
   * state it was changed from (or found unchanged); undefined when there is no live confirmation.
   */
  private async settle(
    key: string,
    next: (pending: StoredConfirmation) => StoredConfirmation | undefined,
  ): Promise<StoredConfirmation | undefined> {
    for (let attempt = 1; ; attempt++) {
      const found = await this.live<StoredConfirmation>(key);
      const changed = found && next(found.value);
      if (!found || !changed) return found?.value;
      try {
        await this.kv.put(key, JSON.stringify(changed), { expected: found.revision });
        return found.value;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  private async live<T>(key: string): Promise<{ value: Expiring<T>; revision: number } | undefined> {
    const entry = await this.kv.get(key);
    const value = entry && (JSON.parse(entry.value) as Expiring<T>);
    return entry && value && value.expiresAt > Date.now() ? { value, revision: entry.revision } : undefined;
  }
}
