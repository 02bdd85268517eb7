import { randomUUID } from 'node:crypto';

/** An event as the outbox keeps it: its subject names its definition in the catalogue given at open. */
export interface OutboxEvent {
  readonly subject: string;
  readonly payload: unknown;
  readonly key: string;
  readonly msgId: string;
}

/** A store write as the outbox keeps it: replayed into its target after a crash (see JournalTarget). */
export interface LoggedWrite {
  readonly target: string;
  readonly data: unknown;
}

export type OutboxRecord =
  /** A journaled change: its store writes and its events in one line, durable together or not at all. */
  | {
      readonly op: 'change';
      readonly tx: string;
      readonly events: readonly OutboxEvent[];
      readonly writes: readonly LoggedWrite[];
    }
  | { readonly op: 'intent'; readonly tx: string; readonly events: readonly OutboxEvent[] }
  /** A commit carries the events when they depend on the write's result (they were not known at the intent). */
  | { readonly op: 'commit'; readonly tx: string; readonly events?: readonly OutboxEvent[] }
  | { readonly op: 'abort' | 'sent'; readonly tx: string };

/** What a file holds once its records are read: writes to replay, in order, and each transaction's state. */
export interface OutboxContents {
  readonly writes: readonly LoggedWrite[];
  /** Transactions whose events may still be unpublished: committed ones, and intents whose outcome is unknown. */
  readonly open: ReadonlyArray<{
    readonly tx: string;
    readonly events: readonly OutboxEvent[];
    readonly committed: boolean;
  }>;
}

/** Reads a file's records into what recovery needs. Aborted changes are dropped whole; sent ones keep their writes. */
export function outboxContents(records: readonly OutboxRecord[]): OutboxContents {
  const aborted = new Set(records.filter((r) => r.op === 'abort').map((r) => r.tx));
  const sent = new Set(records.filter((r) => r.op === 'sent').map((r) => r.tx));
  const committed = new Set(records.filter((r) => r.op === 'commit' || r.op === 'change').map((r) => r.tx));
  const writes: LoggedWrite[] = [];
  const events = new Map<string, readonly OutboxEvent[]>();
  for (const r of records) {
    if (aborted.has(r.tx)) continue;
    if (r.op === 'change') writes.push(...r.writes);
    if (r.op === 'change' || r.op === 'intent' || (r.op === 'commit' && r.events)) events.set(r.tx, r.events!);
  }
  const open = [...events]
    .filter(([tx, evs]) => !sent.has(tx) && evs.length > 0)
    .map(([tx, evs]) => ({ tx, events: evs, committed: committed.has(tx) }));
  return { writes, open };
}

/**
 * A new outbox file's name: its creation time first, so an instance's files (and, after a crash, the files left in
 * a folder) sort in the order they were written — the order their writes must be replayed in.
 */
export function outboxFileName(now = Date.now()): string {
  return `${String(now).padStart(15, '0')}-${randomUUID()}.jsonl`;
}
