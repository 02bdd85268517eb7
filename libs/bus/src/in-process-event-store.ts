import { join } from 'node:path';
import type { StoredEvent } from './bus.js';
import { JsonlLog, type LogPosition, type PositionedRecord } from '#files';
import { DUPLICATE_WINDOW_MS } from './jetstream-streams.js';
import { sanitizeStreamName, subjectMatches } from './subject.js';

interface EventRecord {
  readonly seq: number;
  readonly subject: string;
  readonly time: string;
  readonly msgId: string;
  readonly payload: unknown;
}

interface Loaded {
  seq: number;
  /** When the oldest event kept was stored (ms; Infinity for none), and when the log was last compacted. */
  oldest: number;
  compactedAt: number;
  readonly msgIds: Map<string, number>;
  /** Line positions by the last token of the subject (the entity key, e.g. a memory id), in append order. */
  byKey: Map<string, LogPosition[]>;
}

interface StreamState {
  readonly log: JsonlLog<EventRecord>;
  readonly loaded: Promise<Loaded>;
}

/**
 * Event streams as fsynced JSONL files, one per stream, with message-id deduplication inside the same window as
 * JetStream's (DUPLICATE_WINDOW_MS): a message id seen longer ago is a new event, on both buses. An index of line
 * positions per subject key, built once at load and kept on append, serves a read whose filter names one key (an
 * entity's history) with that entity's lines only, not a read of the whole file. With a maximum age (JetStream's
 * `max_age` on the NATS bus) the logs are compacted: at open, and on append once the oldest event is past it (at most
 * every tenth of the age), the file is rewritten without the expired events (JsonlLog.rewrite: crash-safe).
 */
export class InProcessEventStore {
  private readonly streams = new Map<string, StreamState>();

  constructor(
    private readonly dir: string,
    /** 0: events are kept for ever. */
    private readonly maxAgeMs = 0,
  ) {}

  /**
   * Stores an event, fsynced before it resolves unless `sync` is false: then it is stored and readable, and `sync()`
   * makes it durable later (a killed process keeps it; only a machine losing power before that sync could lose it).
   */
  async append(stream: string, subject: string, payload: unknown, msgId: string, sync = true): Promise<void> {
    const { log, loaded } = this.stream(stream);
    const state = await loaded;
    const now = Date.now();
    forgetOutsideWindow(state.msgIds, now);
    if (state.msgIds.has(msgId)) return;
    state.msgIds.set(msgId, now);
    const record: EventRecord = { seq: ++state.seq, subject, time: new Date(now).toISOString(), msgId, payload };
    let position: LogPosition;
    try {
      position = await log.append(record, sync);
    } catch (err) {
      state.msgIds.delete(msgId);
      throw err;
    }
    indexOne(state.byKey, subject, position);
    state.oldest = Math.min(state.oldest, now);
    if (this.maxAgeMs > 0 && now - state.oldest > this.maxAgeMs && now - state.compactedAt > this.maxAgeMs / 10)
      await this.compact(log, state, now);
  }

  /** Rewrites the log without the events older than the maximum age; the index follows the new positions. */
  private async compact(log: JsonlLog<EventRecord>, state: Loaded, now: number): Promise<void> {
    state.compactedAt = now;
    let kept: EventRecord[] = [];
    const positions = await log.rewrite(
      async (current) => (kept = (await current()).filter((r) => now - Date.parse(r.time) <= this.maxAgeMs)),
    );
    state.byKey = indexAll(kept.map((record, i) => ({ record, ...positions[i]! })));
    state.oldest = kept.length > 0 ? Date.parse(kept[0]!.time) : Number.POSITIVE_INFINITY;
  }

  async *read(stream: string, filter: string): AsyncIterable<StoredEvent> {
    const { log, loaded } = this.stream(stream);
    const state = await loaded;
    const key = lastToken(filter);
    let records: EventRecord[];
    if (key === '*' || key === '>') records = await log.readAll();
    else {
      // Another writer of the same file (a second bus over one data dir) appended lines this index has not seen.
      if (await log.changedElsewhere()) state.byKey = indexAll(await log.scan());
      records = await log.readAt(state.byKey.get(key) ?? []);
    }
    for (const r of records) {
      if (subjectMatches(filter, r.subject)) yield { subject: r.subject, seq: r.seq, time: r.time, payload: r.payload };
    }
  }

  /** Makes every event stored so far durable, with one fsync per stream written to. */
  async sync(): Promise<void> {
    await Promise.all([...this.streams.values()].map((s) => s.log.sync()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.streams.values()].map((s) => s.log.close()));
    this.streams.clear();
  }

  private stream(name: string): StreamState {
    let state = this.streams.get(name);
    if (!state) {
      const log = new JsonlLog<EventRecord>(join(this.dir, `${sanitizeStreamName(name)}.jsonl`), 'events');
      const loaded = log.scan().then(async (lines) => {
        const state: Loaded = {
          seq: lines.reduce((max, l) => Math.max(max, l.record.seq), 0),
          oldest: lines.length > 0 ? Date.parse(lines[0]!.record.time) : Number.POSITIVE_INFINITY,
          compactedAt: 0,
          msgIds: forgetOutsideWindow(new Map(lines.map(({ record: r }) => [r.msgId, Date.parse(r.time)])), Date.now()),
          byKey: indexAll(lines),
        };
        const now = Date.now();
        if (this.maxAgeMs > 0 && now - state.oldest > this.maxAgeMs) await this.compact(log, state, now);
        return state;
      });
      state = { log, loaded };
      this.streams.set(name, state);
    }
    return state;
  }
}

function lastToken(subject: string): string {
  return subject.slice(subject.lastIndexOf('.') + 1);
}

function indexOne(byKey: Map<string, LogPosition[]>, subject: string, position: LogPosition): void {
  const key = lastToken(subject);
  const list = byKey.get(key);
  if (list) list.push(position);
  else byKey.set(key, [position]);
}

function indexAll(lines: readonly PositionedRecord<EventRecord>[]): Map<string, LogPosition[]> {
  const byKey = new Map<string, LogPosition[]>();
  for (const { record, offset, length } of lines) indexOne(byKey, record.subject, { offset, length });
  return byKey;
}

/** Drops message ids older than the duplicate window (insertion order is time order). */
function forgetOutsideWindow(msgIds: Map<string, number>, now: number): Map<string, number> {
  for (const [id, at] of msgIds) {
    if (now - at < DUPLICATE_WINDOW_MS) break;
    msgIds.delete(id);
  }
  return msgIds;
}
