import { join } from 'node:path';
import type { StoredEvent } from './bus.js';
import { JsonlLog } from './jsonl-log.js';
import { DUPLICATE_WINDOW_MS } from './jetstream-streams.js';
import { sanitizeStreamName, subjectMatches } from './subject.js';

interface EventRecord {
  readonly seq: number;
  readonly subject: string;
  readonly time: string;
  readonly msgId: string;
  readonly payload: unknown;
}

interface StreamState {
  readonly log: JsonlLog<EventRecord>;
  readonly loaded: Promise<{ seq: number; msgIds: Map<string, number> }>;
}

/**
 * Event streams as fsynced JSONL files, one per stream, with message-id deduplication inside the same window as
 * JetStream's (DUPLICATE_WINDOW_MS): a message id seen longer ago is a new event, on both buses.
 */
export class InProcessEventStore {
  private readonly streams = new Map<string, StreamState>();

  constructor(private readonly dir: string) {}

  async append(stream: string, subject: string, payload: unknown, msgId: string): Promise<void> {
    const { log, loaded } = this.stream(stream);
    const state = await loaded;
    const now = Date.now();
    forgetOutsideWindow(state.msgIds, now);
    if (state.msgIds.has(msgId)) return;
    state.msgIds.set(msgId, now);
    const record: EventRecord = { seq: ++state.seq, subject, time: new Date(now).toISOString(), msgId, payload };
    try {
      await log.append(record);
    } catch (err) {
      state.msgIds.delete(msgId);
      throw err;
    }
  }

  async *read(stream: string, filter: string): AsyncIterable<StoredEvent> {
    const records = await this.stream(stream).log.readAll();
    for (const r of records) {
      if (subjectMatches(filter, r.subject)) yield { subject: r.subject, seq: r.seq, time: r.time, payload: r.payload };
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.streams.values()].map((s) => s.log.close()));
    this.streams.clear();
  }

  private stream(name: string): StreamState {
    let state = this.streams.get(name);
    if (!state) {
      const log = new JsonlLog<EventRecord>(join(this.dir, `${sanitizeStreamName(name)}.jsonl`));
      const loaded = log.readAll().then((records) => ({
        seq: records.reduce((max, r) => Math.max(max, r.seq), 0),
        msgIds: forgetOutsideWindow(new Map(records.map((r) => [r.msgId, Date.parse(r.time)])), Date.now()),
      }));
      state = { log, loaded };
      this.streams.set(name, state);
    }
    return state;
  }
}

/** Drops message ids older than the duplicate window (insertion order is time order). */
function forgetOutsideWindow(msgIds: Map<string, number>, now: number): Map<string, number> {
  for (const [id, at] of msgIds) {
    if (now - at < DUPLICATE_WINDOW_MS) break;
    msgIds.delete(id);
  }
  return msgIds;
}
