import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metrics } from '#metrics';
import { LanceDbStore } from './lancedb.store.js';
import { vectorStoreContract } from './vector-store.contract.js';

vectorStoreContract(describe, LanceDbStore.name, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-lancedb-'));
  return {
    create: () => Promise.resolve(new LanceDbStore({ dir, tuning: { flushDelayMs: 5, compactMinRows: 50 } })),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe(LanceDbStore.name, () => {
  let dir: string;
  let store: LanceDbStore;
  const scope = { tenant: 't', agent: 'alfred' };
  const spec = { name: 'big', embedderId: 'test-v1-16', dimension: 16, fields: { tags: 'string[]' } } as const;
  const randomVector = (seed: number) =>
    Float32Array.from({ length: 16 }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-lancedb-'));
    store = new LanceDbStore({ dir, tuning: { compactMinRows: 1e9, compactMaxFlushes: 1e9 } });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('maintain', () => {
    it('should compact and still find rows by vector and by text, including rows written after it', async () => {
      const c = await store.open(spec);
      const docs = Array.from({ length: 600 }, (_, i) => ({
        ...scope,
        id: `d${i}`,
        text: `note number ${i}`,
        vector: randomVector(i),
        fields: { tags: [`t${i % 7}`] },
      }));
      await c.upsert(docs);
      await c.maintain();
      expect(c.lastMaintenanceError).toBeUndefined();
      expect(await c.indexedColumns()).toEqual(expect.arrayContaining(['tenant', 'agent', 'id', 'f_tags']));
      const fresh = { ...scope, id: 'fresh', text: 'okapi', vector: randomVector(10_000), fields: { tags: ['new'] } };
      await c.upsert([fresh]);
      const fuse = (s: { lexical: number; dense?: number }) => (s.lexical + (s.dense ?? 0)) / 2;
      const byVector = await c.search(
        { ...scope },
        { vector: fresh.vector, text: 'nothing matches', limit: 3, minScore: 0, fuse },
      );
      expect(byVector.hits[0]).toMatchObject({ doc: { id: 'fresh' }, signals: { lexical: 0 } });
      expect(byVector.hits[0]!.score).toBeCloseTo(0.5, 3);
      const byText = await c.search({ ...scope }, { vector: randomVector(-1), text: 'okapi', limit: 3, minScore: 0 });
      expect(byText.hits.map((h) => h.doc.id)).toContain('fresh');
      const exact = await c.search({ ...scope }, { vector: docs[42]!.vector, text: '', limit: 1, minScore: 0 });
      expect(exact.hits[0]!.doc.id).toBe('d42');
    });

    it('should keep every insert committed while maintenance compacts and reindexes beside them', async () => {
      const c = await store.open(spec);
      const doc = (i: number) => ({
        ...scope,
        id: `d${i}`,
        text: `note number ${i}`,
        vector: randomVector(i),
        fields: { tags: [`t${i % 7}`] },
      });
      for (let i = 0; i < 40; i++) await c.insert([doc(i)]);
      const maintenance = c.maintain();
      const inserts = Array.from({ length: 40 }, (_, i) => c.insert([doc(40 + i)]));
      const update = c.upsert([{ ...doc(3), text: 'rewritten while maintenance ran' }]);
      await Promise.all([maintenance, ...inserts, update]);
      expect(c.lastMaintenanceError).toBeUndefined();
      const all = await c.list({ ...scope }, { sortBy: 'id', order: 'asc', limit: 100, offset: 0 });
      expect(all.total).toBe(80);
      expect((await c.get(scope, ['d3']))[0]!.text).toBe('rewritten while maintenance ran');
      const found = await c.search(
        { ...scope },
        { vector: randomVector(79), text: 'number 79', limit: 1, minScore: 0 },
      );
      expect(found.hits[0]!.doc.id).toBe('d79');
    });

    it('should rebuild the indexes over rows written since a compaction, without another compaction', async () => {
      await store.close();
      store = new LanceDbStore({ dir, tuning: { compactMinRows: 50, compactMaxFlushes: 1e9, indexSlack: 1 / 8 } });
      const c = await store.open(spec);
      const doc = (i: number) => ({
        ...scope,
        agent: `agent-${i % 30}`,
        id: `d${i}`,
        text: `note number ${i}`,
        vector: randomVector(i),
        fields: { tags: [`t${i % 7}`] },
      });
      await c.insert(Array.from({ length: 600 }, (_, i) => doc(i)));
      await c.maintain();
      expect(await c.unindexedRows()).toBe(0);
      const builds = () => Metrics.storeIndexBuilds.get().then((m) => m.values.reduce((n, v) => n + v.value, 0));
      const before = await builds();
      // Two flushes of 60: 120 rows, past an eighth of the 600 covered, short of the half that compacts.
      await c.insert(Array.from({ length: 60 }, (_, i) => doc(600 + i)));
      await c.insert(Array.from({ length: 60 }, (_, i) => doc(660 + i)));
      await c.flush();
      expect(c.lastMaintenanceError).toBeUndefined();
      expect(await builds()).toBe(before + 1);
      expect(await c.unindexedRows()).toBe(0);
      const listed = await c.list(
        { ...scope, agent: 'agent-7' },
        { sortBy: 'id', order: 'asc', limit: 100, offset: 0 },
      );
      expect(listed.total).toBe(24);
      expect((await c.get({ ...scope, agent: 'agent-9' }, ['d699']))[0]!.text).toBe('note number 699');
    });
  });
});
