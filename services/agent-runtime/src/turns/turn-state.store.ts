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

/** The embedded shape's turn state (one process). */
export class MemoryTurnStateStore implements TurnStateStore {
  private readonly entries = new Map<string, { value: unknown; expires: number }>();

  async setCurrent(scope: Scope, sessionId: string, turn: CurrentTurn, ttlMs: number): Promise<void> {
    this.put(`cur:${key(scope, sessionId)}`, turn, ttlMs);
  }

  async current(scope: Scope, sessionId: string): Promise<CurrentTurn | undefined> {
    return this.get(`cur:${key(scope, sessionId)}`) as CurrentTurn | undefined;
  }

  async clearCurrent(scope: Scope, sessionId: string, turnId: string): Promise<void> {
    const k = `cur:${key(scope, sessionId)}`;
    if ((this.get(k) as CurrentTurn | undefined)?.turn_id === turnId) this.entries.delete(k);
  }

  async requestCancel(turnId: string, ttlMs: number): Promise<void> {
    this.put(`cancel:${turnId}`, true, ttlMs);
  }

  async cancelRequested(turnId: string): Promise<boolean> {
    return this.get(`cancel:${turnId}`) === true;
  }

  async openConfirmation(scope: Scope, sessionId: string, pending: PendingConfirmation, ttlMs: number): Promise<void> {
    this.put(`confirm:${key(scope, sessionId)}:${pending.request_id}`, { ...pending, answer: null }, ttlMs);
  }

  async answer(scope: Scope, sessionId: string, requestId: string, approve: boolean): Promise<AnswerOutcome> {
    const k = `confirm:${key(scope, sessionId)}:${requestId}`;
    const entry = this.entries.get(k);
    const pending = this.get(k) as (PendingConfirmation & { answer: boolean | null; closed?: string }) | undefined;
    if (!pending || !entry) return 'unknown';
    if (pending.closed !== undefined) return { closed: pending.closed };
    if (pending.answer !== null) return 'answered';
    entry.value = { ...pending, answer: approve };
    return { turn_id: pending.turn_id };
  }

  async answerOf(scope: Scope, sessionId: string, requestId: string): Promise<boolean | undefined> {
    const pending = this.get(`confirm:${key(scope, sessionId)}:${requestId}`) as { answer: boolean | null } | undefined;
    return pending?.answer ?? undefined;
  }

  async closeConfirmation(scope: Scope, sessionId: string, requestId: string, reason: string): Promise<void> {
    const entry = this.entries.get(`confirm:${key(scope, sessionId)}:${requestId}`);
    const pending = entry?.value as { answer: boolean | null; closed?: string } | undefined;
    if (entry && pending && pending.answer === null && pending.closed === undefined) entry.value = { ...pending, closed: reason };
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  private put(k: string, value: unknown, ttlMs: number): void {
    this.entries.set(k, { value, expires: Date.now() + ttlMs });
  }

  private get(k: string): unknown {
    const e = this.entries.get(k);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(k);
      return undefined;
    }
    return e.value;
  }
}

export function key(scope: Scope, sessionId: string): string {
  return `${encodeURIComponent(scope.tenant)}:${scope.agent}:${sessionId}`;
}
