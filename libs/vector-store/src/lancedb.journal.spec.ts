import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { CompactionSchedule } from './lancedb-compaction.js';
import { LanceDbStore } from './lancedb.store.js';
import type { CollectionSpec, Doc } from './vector-store.js';

const scope = { tenant: 't', agent: 'alfred' };
const spec: CollectionSpec = { name: 'notes', embedderId: 'test-v1-4', dimension: 4, fields: { n: 'number' } };
const doc = (id: string, text: string, n = 0): Doc => ({
  ...scope,
  id,
  text,
  vector: new Float32Array([1, 0, n, 0]),
  fields: { n },
});
const listAll = { sortBy: 'id', order: 'asc', limit: 100, offset: 0 } as const;

describe('LanceDbCollection journaled writes', () => {
  let dir: string;
  let store: LanceDbStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-journal-'));
    store = new LanceDbStore({ dir, tuning: { flushDelayMs: 60_000 } });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  /** Rows in the table on disk, read by a connection of its own (not the collection's memory). */
  const rowsOnDisk = async () => {
    const db = await connect(dir);
    try {
      return (await db.tableNames()).includes('notes') ? await (await db.openTable('notes')).countRows() : 0;
    } finally {
      db.close();
    }
  };

  it('should show an applied write at once, reach the table with the next flush, and flush before a list', async () => {
    const c = await store.open(spec);
    const prepared = c.journal!.prepare({ kind: 'insert', docs: [doc('a', 'first note')] });
    expect(await c.get(scope, ['a'])).toEqual([]);
    prepared.apply();
    expect((await c.get(scope, ['a'])).map((d) => d.text)).toEqual(['first note']);
    expect((await c.search({ ...scope }, { text: 'first', limit: 5, minScore: 0 })).hits.map((h) => h.doc.id)).toEqual([
      'a',
    ]);
    expect(await rowsOnDisk()).toBe(0);
    expect((await c.list({ ...scope }, listAll)).total).toBe(1);
    expect(await rowsOnDisk()).toBe(1);
  });

  it('should refuse a document that does not fit before anything is applied or logged', async () => {
    const c = await store.open(spec);
    expect(() =>
      c.journal!.prepare({ kind: 'upsert', docs: [{ ...doc('bad', 'x'), fields: { n: 'not a number' } }] }),
    ).toThrow(/does not fit/);
    expect(await c.get(scope, ['bad'])).toEqual([]);
  });

  it('should commit a burst of writes as their net effect, in few commits, and replay idempotently', async () => {
    const c = await store.open(spec);
    const versionBefore = await (await (await connect(dir)).openTable('notes')).version();
    for (let i = 0; i < 50; i++) c.journal!.prepare({ kind: 'insert', docs: [doc(`d${i}`, `note ${i}`)] }).apply();
    c.journal!.prepare({ kind: 'upsert', docs: [doc('d3', 'note 3, edited', 3)] }).apply();
    c.journal!.prepare({ kind: 'delete', scope, ids: ['d4'] }).apply();
    await c.journal!.flush();
    const versionAfter = await (await (await connect(dir)).openTable('notes')).version();
    expect(versionAfter - versionBefore).toBeLessThanOrEqual(2);
    expect(await rowsOnDisk()).toBe(49);
    // A crash after the flush replays the same log lines: the table must end up the same.
    const replay = c.journal!.prepare({ kind: 'insert', docs: [doc('d0', 'note 0')] });
    c.journal!.replay(replay.data);
    c.journal!.replay(c.journal!.prepare({ kind: 'delete', scope, ids: ['d4'] }).data);
    await c.journal!.flush();
    expect(await rowsOnDisk()).toBe(49);
    const listed = await c.list({ ...scope }, listAll);
    expect(listed.docs.find((d) => d.id === 'd3')).toMatchObject({ text: 'note 3, edited', fields: { n: 3 } });
  });

  it('should keep direct and journaled writes in the order they were made', async () => {
    const c = await store.open(spec);
    c.journal!.prepare({ kind: 'insert', docs: [doc('o', 'journaled first')] }).apply();
    const direct = c.upsert([doc('o', 'direct second')]);
    await direct;
    expect((await c.get(scope, ['o'])).map((d) => d.text)).toEqual(['direct second']);
    await store.close();
    store = new LanceDbStore({ dir });
    expect((await (await store.open(spec)).get(scope, ['o'])).map((d) => d.text)).toEqual(['direct second']);
  });

  it('should refuse writes once closed', async () => {
    const c = await store.open(spec);
    await c.close();
    expect(() => c.journal!.prepare({ kind: 'insert', docs: [doc('late', 'x')] })).toThrow(/closed/);
    await expect(c.upsert([doc('late', 'x')])).rejects.toThrow(/closed/);
  });
});

describe(CompactionSchedule.name, () => {
  const policy = { minRows: 100, maxFlushes: 1_000, indexSlack: 1 / 8 };

  it('should wait for half the table in new rows, so each row is rewritten a bounded number of times', () => {
    const schedule = new CompactionSchedule({ ...policy, indexSlack: 1e9 }, 10_000);
    let rewritten = 0;
    let rows = 10_000;
    let compactions = 0;
    for (let flush = 0; flush < 2_000; flush++) {
      rows += 100;
      if (schedule.flushed(100) === 'compact') {
        rewritten += rows;
        compactions++;
        schedule.compacted(rows);
      }
    }
    // 200k rows written on top of 10k: geometric growth keeps the total rewrite within a few times the table.
    expect(compactions).toBeGreaterThan(3);
    expect(compactions).toBeLessThan(12);
    expect(rewritten).toBeLessThan(4 * rows);
  });

  it('should compact after maxFlushes however few rows they held, and never after a single flush', () => {
    const schedule = new CompactionSchedule({ ...policy, minRows: 1_000, maxFlushes: 5 }, 1_000_000);
    expect([1, 2, 3, 4].map(() => schedule.flushed(1))).toEqual([undefined, undefined, undefined, undefined]);
    expect(schedule.flushed(1)).toBe('compact');
    const fresh = new CompactionSchedule({ ...policy, minRows: 1, maxFlushes: 5 }, 0);
    expect(fresh.flushed(10_000)).toBeUndefined();
    expect(fresh.flushed(1)).toBe('compact');
  });

  it('should rebuild the indexes between compactions once the uncovered rows reach their slack', () => {
    const schedule = new CompactionSchedule(policy, 80_000);
    let rows = 80_000;
    let uncovered = 0;
    let mostUncovered = 0;
    let keysRead = 0;
    const done: string[] = [];
    for (let flush = 0; flush < 1_000; flush++) {
      rows += 200;
      uncovered += 200;
      mostUncovered = Math.max(mostUncovered, uncovered / rows);
      const due = schedule.flushed(200);
      if (due === 'reindex') {
        keysRead += rows;
        uncovered = 0;
        schedule.reindexed();
      }
      if (due === 'compact') {
        uncovered = 0;
        schedule.compacted(rows);
      }
      if (due) done.push(due);
    }
    // Filtered reads scan at most ~an eighth of the table, against up to a third with compactions alone; the keys
    // read by rebuilds stay a bounded multiple of the rows (geometric again).
    expect(done.filter((d) => d === 'reindex').length).toBeGreaterThan(done.filter((d) => d === 'compact').length);
    expect(mostUncovered).toBeLessThan(0.125);
    expect(keysRead).toBeLessThan(12 * rows);
  });

  it('should not ask again for maintenance it said was due until it is done or failed', () => {
    const schedule = new CompactionSchedule(policy, 10_000, 0);
    expect(schedule.flushed(100)).toBeUndefined();
    expect(schedule.flushed(1_300)).toBe('reindex');
    expect(schedule.flushed(100)).toBeUndefined();
    schedule.failed();
    expect(schedule.flushed(100)).toBe('reindex');
    schedule.reindexed();
    expect(schedule.flushed(50)).toBeUndefined();
    expect(schedule.flushed(1_500)).toBe('reindex');
  });

  it("should count the rows a table's indexes left uncovered before it was opened", () => {
    const schedule = new CompactionSchedule(policy, 10_000, 5_000);
    expect(schedule.flushed(1)).toBeUndefined();
    expect(schedule.flushed(1)).toBe('reindex');
  });
});
