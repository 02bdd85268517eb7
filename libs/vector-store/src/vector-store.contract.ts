import { randomUUID } from 'node:crypto';
import { ErrorCode } from '#contracts';
import type { CollectionSpec, Doc, DocScope, FieldValue, StoredDoc, VectorStore } from './vector-store.js';

/** How a contract run reaches a store: `create` must give a store over the same data each time. */
export interface StoreHarness {
  create(): Promise<VectorStore>;
  cleanup(): Promise<void>;
}

const DIM = 8;
const FIELDS = { importance: 'number', tags: 'string[]', source: 'string', pinned: 'boolean' } as const;

/** A unit vector mostly along `axis`, leaning `lean` towards `towards`. */
export function axisVector(axis: number, lean = 0, towards = (axis + 1) % DIM): Float32Array {
  const v = new Float32Array(DIM);
  v[axis] = 1;
  v[towards] += lean;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function doc(
  scope: DocScope,
  id: string,
  text: string,
  fields: Partial<Record<keyof typeof FIELDS, FieldValue>> = {},
  vector = axisVector(7),
): Doc {
  return {
    ...scope,
    id,
    text,
    vector,
    fields: { importance: 0.5, tags: [], source: 'memory', pinned: false, ...fields },
  };
}

const ids = (docs: readonly StoredDoc[]) => docs.map((d) => d.id);

/**
 * The behaviour every VectorStore adapter must show. Call at a test module's top level with the
 * describe to use (describe, or describe.skip when the backing server is absent).
 */
export function vectorStoreContract(
  describeFn: jest.Describe,
  title: string,
  makeHarness: () => Promise<StoreHarness>,
): void {
  describeFn(`${title} (vector-store contract)`, () => {
    let harness: StoreHarness;
    let store: VectorStore;
    let spec: CollectionSpec;
    const a: DocScope = { tenant: 'tenant-a', agent: 'alfred' };
    const b: DocScope = { tenant: 'tenant-b', agent: 'alfred' };
    const a2: DocScope = { tenant: 'tenant-a', agent: 'other' };

    beforeAll(async () => {
      harness = await makeHarness();
      store = await harness.create();
    });
    afterAll(async () => {
      await store?.close();
      await harness?.cleanup();
    });
    beforeEach(() => {
      spec = {
        name: `c_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
        embedderId: 'test-v1-8',
        dimension: DIM,
        fields: FIELDS,
      };
    });

    describe('upsert/get/delete', () => {
      it('should store, read back, update and delete documents', async () => {
        const c = await store.open(spec);
        await c.upsert([
          doc(a, 'd1', 'first', { tags: ['x', 'y'], pinned: true, importance: 0.25 }),
          doc(a, 'd2', 'second', { source: null }),
        ]);
        const got = await c.get(a, ['d1', 'd2', 'missing']);
        expect(got.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
          {
            ...a,
            id: 'd1',
            text: 'first',
            fields: { importance: 0.25, tags: ['x', 'y'], source: 'memory', pinned: true },
          },
          { ...a, id: 'd2', text: 'second', fields: { importance: 0.5, tags: [], source: null, pinned: false } },
        ]);
        await c.upsert([doc(a, 'd1', 'first, edited', { importance: 0.75 })]);
        expect((await c.get(a, ['d1']))[0]).toMatchObject({ text: 'first, edited', fields: { importance: 0.75 } });
        expect(await c.delete(a, ['d1', 'missing'])).toEqual(['d1']);
        expect(ids(await c.get(a, ['d1', 'd2']))).toEqual(['d2']);
        expect(await c.get(a, [])).toEqual([]);
      });
    });

    describe('insert', () => {
      it('should store new documents that read, list and search like upserted ones', async () => {
        const c = await store.open(spec);
        await c.insert([doc(a, 'n1', 'freshly inserted walrus', { tags: ['x'] }), doc(b, 'n1', 'walrus of scope b')]);
        expect(await c.get(a, ['n1'])).toEqual([
          expect.objectContaining({ ...a, id: 'n1', text: 'freshly inserted walrus' }),
        ]);
        expect(await c.get(b, ['n1'])).toEqual([
          expect.objectContaining({ ...b, id: 'n1', text: 'walrus of scope b' }),
        ]);
        const found = await c.search({ ...a }, { vector: axisVector(7), text: 'walrus', limit: 5, minScore: 0 });
        expect(found.hits.map((h) => [h.doc.tenant, h.doc.id])).toEqual([[a.tenant, 'n1']]);
        await c.upsert([doc(a, 'n1', 'then updated')]);
        expect((await c.get(a, ['n1'])).map((d) => d.text)).toEqual(['then updated']);
      });

      it('should land every one of many concurrent writes, each resolving once stored', async () => {
        const c = await store.open(spec);
        const writes = Array.from({ length: 24 }, (_, i) =>
          (i % 3 === 0 ? c.upsert([doc(a, `w${i}`, `write ${i}`)]) : c.insert([doc(a, `w${i}`, `write ${i}`)])).then(
            () => c.get(a, [`w${i}`]),
          ),
        );
        const seen = await Promise.all(writes);
        expect(seen.map((d) => d.map((x) => x.id))).toEqual(Array.from({ length: 24 }, (_, i) => [`w${i}`]));
        const deleted = c.delete(a, ['w0', 'w1']);
        const rewritten = c.upsert([doc(a, 'w1', 'written after the delete')]);
        expect(await deleted).toEqual(['w0', 'w1']);
        await rewritten;
        expect((await c.get(a, ['w0', 'w1'])).map((d) => d.text)).toEqual(['written after the delete']);
      });
    });

    describe('scope isolation', () => {
      it('should never show, list, find or delete another scope’s documents', async () => {
        const c = await store.open(spec);
        const q = axisVector(0);
        await c.upsert([
          doc(a, 'same', 'zebra in scope a', {}, q),
          doc(b, 'same', 'zebra in scope b', {}, q),
          doc(a2, 'other', 'zebra in a2', {}, q),
        ]);
        expect(await c.get(b, ['same'])).toEqual([expect.objectContaining({ ...b, text: 'zebra in scope b' })]);
        expect(await c.get(b, ['other'])).toEqual([]);
        const listed = await c.list({ ...a }, { sortBy: 'id', order: 'asc', limit: 10, offset: 0 });
        expect(listed).toEqual({ docs: [expect.objectContaining({ ...a, id: 'same' })], total: 1 });
        const found = await c.search({ ...a2 }, { vector: q, text: 'zebra', limit: 10, minScore: 0 });
        expect(found.hits.map((h) => [h.doc.tenant, h.doc.agent, h.doc.id])).toEqual([[a2.tenant, a2.agent, 'other']]);
        expect(found.total).toBe(1);
        expect(await c.delete(b, ['other'])).toEqual([]);
        expect(await c.delete(b, ['same'])).toEqual(['same']);
        expect(await c.get(a, ['same'])).toHaveLength(1);
      });

      it('should apply the scope before ranking, even when other scopes crowd the candidates', async () => {
        const c = await store.open(spec);
        const q = axisVector(0);
        const crowd = Array.from({ length: 150 }, (_, i) => doc(b, `b${i}`, 'zebra zebra zebra', {}, q));
        await c.upsert([
          ...crowd,
          doc(a, 'mine', 'a zebra and many other words in a longer text', {}, axisVector(0, 2)),
        ]);
        const found = await c.search({ ...a }, { vector: q, text: 'zebra', limit: 5, minScore: 0 });
        expect(ids(found.hits.map((h) => h.doc))).toEqual(['mine']);
      });
    });

    describe('list', () => {
      const seed = async () => {
        const c = await store.open(spec);
        await c.upsert([
          doc(a, 'm1', 'one', { importance: 0.9, tags: ['work', 'urgent'], source: 'memory' }),
          doc(a, 'm2', 'two', { importance: 0.1, tags: ['home'], source: 'daily', pinned: true }),
          doc(a, 'm3', 'three', { importance: 0.5, tags: ['work'], source: 'daily' }),
          doc(a, 'm4', 'four', { importance: 0.5, tags: [], source: 'memory' }),
        ]);
        return c;
      };
      const page = { sortBy: 'id', order: 'asc', limit: 10, offset: 0 } as const;

      it('should filter by eq, contains, ranges and booleans', async () => {
        const c = await seed();
        const q = (where: NonNullable<Parameters<typeof c.list>[0]['where']>) =>
          c.list({ ...a, where }, page).then((r) => ids(r.docs));
        expect(await q([{ field: 'source', op: 'eq', value: 'daily' }])).toEqual(['m2', 'm3']);
        expect(await q([{ field: 'tags', op: 'contains', value: 'work' }])).toEqual(['m1', 'm3']);
        expect(await q([{ field: 'tags', op: 'contains', value: 'wor' }])).toEqual([]);
        expect(
          await q([
            { field: 'importance', op: 'gte', value: 0.5 },
            { field: 'importance', op: 'lte', value: 0.5 },
          ]),
        ).toEqual(['m3', 'm4']);
        expect(await q([{ field: 'pinned', op: 'eq', value: true }])).toEqual(['m2']);
        expect(
          await q([
            { field: 'tags', op: 'contains', value: 'work' },
            { field: 'source', op: 'eq', value: 'memory' },
          ]),
        ).toEqual(['m1']);
      });

      it('should sort by number and string both ways, ties by id', async () => {
        const c = await seed();
        const sorted = (sortBy: string, order: 'asc' | 'desc') =>
          c.list({ ...a }, { ...page, sortBy, order }).then((r) => ids(r.docs));
        expect(await sorted('importance', 'asc')).toEqual(['m2', 'm3', 'm4', 'm1']);
        expect(await sorted('importance', 'desc')).toEqual(['m1', 'm3', 'm4', 'm2']);
        expect(await sorted('source', 'asc')).toEqual(['m2', 'm3', 'm1', 'm4']);
        expect(await sorted('id', 'desc')).toEqual(['m4', 'm3', 'm2', 'm1']);
      });

      it('should page with offset and limit and report the filtered total', async () => {
        const c = await seed();
        const p1 = await c.list({ ...a }, { ...page, limit: 3 });
        const p2 = await c.list({ ...a }, { ...page, limit: 3, offset: 3 });
        expect([ids(p1.docs), p1.total, ids(p2.docs), p2.total]).toEqual([['m1', 'm2', 'm3'], 4, ['m4'], 4]);
        const filtered = await c.list(
          { ...a, where: [{ field: 'source', op: 'eq', value: 'daily' }] },
          { ...page, limit: 1, offset: 1 },
        );
        expect(filtered).toEqual({ docs: [expect.objectContaining({ id: 'm3' })], total: 2 });
        expect((await c.list({ ...a }, { ...page, offset: 10 })).docs).toEqual([]);
      });
    });

    describe('search', () => {
      const seed = async () => {
        const c = await store.open(spec);
        await c.upsert([
          doc(a, 'lexical', 'the zebra crossing on main street', { source: 'daily' }, axisVector(3)),
          doc(a, 'semantic', 'a striped horse of the savanna', {}, axisVector(0, 0.2)),
          doc(a, 'both', 'zebra herds of the savanna', {}, axisVector(0, 0.3)),
          doc(a, 'unrelated', 'quarterly revenue report', {}, axisVector(5)),
        ]);
        return c;
      };
      /** Equal weights, as the ranking module gives a semantic embedder. */
      const fuse = (s: { lexical: number; dense?: number }) => (s.lexical + (s.dense ?? 0)) / 2;
      const query = { vector: axisVector(0), text: 'zebra', limit: 10, minScore: 0, fuse };

      it('should rank a lexical match and a semantic neighbour, best evidence first', async () => {
        const c = await seed();
        const { hits, total } = await c.search({ ...a }, query);
        expect(ids(hits.map((h) => h.doc))).toEqual(['both', 'semantic', 'lexical']);
        expect(total).toBe(3);
        for (const h of hits) expect(h.score).toBeGreaterThan(0);
        for (const h of hits) expect(h.score).toBeLessThanOrEqual(1);
        expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
        expect(hits[0]!.doc).toEqual(expect.objectContaining({ ...a, text: 'zebra herds of the savanna' }));
        expect(hits[0]!.signals.lexical).toBeGreaterThan(0);
        expect(hits[0]!.signals.dense).toBeGreaterThan(0.9);
        expect(hits.find((h) => h.doc.id === 'semantic')!.signals.lexical).toBe(0);
      });

      it('should search by words alone, without a vector', async () => {
        const c = await seed();
        const { vector: _v, ...lexicalOnly } = query;
        const { hits, total } = await c.search({ ...a }, lexicalOnly);
        expect(ids(hits.map((h) => h.doc)).sort()).toEqual(['both', 'lexical']);
        expect(total).toBe(2);
        for (const h of hits) expect(h.signals).toEqual({ lexical: h.score });
      });

      it('should index stored context at a lower weight than the text, and return the text alone', async () => {
        const c = await store.open(spec);
        await c.upsert([
          { ...doc(a, 'own', 'the okapi grazed', {}), context: 'unrelated words' },
          { ...doc(a, 'ctx', 'it grazed quietly', {}), context: 'an okapi was near' },
        ]);
        const { hits } = await c.search({ ...a }, { text: 'okapi', limit: 5, minScore: 0 });
        expect(ids(hits.map((h) => h.doc))).toEqual(['own', 'ctx']);
        expect(hits[1]!.doc).toMatchObject({ text: 'it grazed quietly', context: 'an okapi was near' });
      });

      it('should drop hits under minScore before counting total, and cut to limit after', async () => {
        const c = await seed();
        const all = await c.search({ ...a }, query);
        const cut = all.hits[1]!.score;
        const strong = await c.search({ ...a }, { ...query, minScore: cut });
        expect(ids(strong.hits.map((h) => h.doc))).toEqual(['both', 'semantic']);
        expect(strong.total).toBe(2);
        const limited = await c.search({ ...a }, { ...query, limit: 1 });
        expect([ids(limited.hits.map((h) => h.doc)), limited.total]).toEqual([['both'], 3]);
      });

      it('should apply where filters to both sides', async () => {
        const c = await seed();
        const { hits } = await c.search({ ...a, where: [{ field: 'source', op: 'eq', value: 'daily' }] }, query);
        expect(ids(hits.map((h) => h.doc))).toEqual(['lexical']);
      });

      it('should find a document by its text right after it is written', async () => {
        const c = await seed();
        await c.upsert([doc(a, 'fresh', 'okapi sighting today', {}, axisVector(6))]);
        const { hits } = await c.search({ ...a }, { ...query, vector: axisVector(2), text: 'okapi' });
        expect(ids(hits.map((h) => h.doc))).toEqual(['fresh']);
      });
    });

    describe('user strings', () => {
      it('should treat quotes and SQL-looking input as plain data', async () => {
        const evil: DocScope = { tenant: 'o\'brien"; DROP TABLE x; --', agent: 'alfred' };
        const c = await store.open(spec);
        const id = "x' OR '1'='1";
        await c.upsert([
          doc(evil, id, 'it\'s a "quoted" (text) with AND OR NOT * ? \\ %', { tags: ["a'b", 'c"d'], source: "it's" }),
          doc(a, 'victim', 'should stay hidden', { tags: ["a'b"] }),
        ]);
        expect(ids(await c.get(evil, [id, "' OR 1=1 --", 'victim']))).toEqual([id]);
        const list = (where: NonNullable<Parameters<typeof c.list>[0]['where']>) =>
          c.list({ ...evil, where }, { sortBy: 'id', order: 'asc', limit: 10, offset: 0 }).then((r) => ids(r.docs));
        expect(await list([{ field: 'tags', op: 'contains', value: "a'b" }])).toEqual([id]);
        expect(await list([{ field: 'source', op: 'eq', value: "it's" }])).toEqual([id]);
        expect(await list([{ field: 'source', op: 'eq', value: "' OR '1'='1" }])).toEqual([]);
        const found = await c.search(
          { ...evil },
          { vector: axisVector(7), text: '"quoted" (text) AND \' OR', limit: 5, minScore: 0 },
        );
        expect(ids(found.hits.map((h) => h.doc))).toEqual([id]);
        expect(await c.delete(evil, [id])).toEqual([id]);
        expect(await c.get(a, ['victim'])).toHaveLength(1);
      });
    });

    describe('open/describe/recreate', () => {
      it('should refuse a collection made by another embedder and name the fix', async () => {
        await (await store.open(spec)).upsert([doc(a, 'd', 'text')]);
        expect(await store.describe(spec.name)).toEqual({ embedderId: 'test-v1-8', dimension: DIM });
        expect(await store.describe(`${spec.name}_none`)).toBeUndefined();
        const other = { ...spec, embedderId: 'other-model', dimension: 16 };
        const err = await store.open(other).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: ErrorCode.EmbedderMismatch });
        expect((err as Error).message).toContain('test-v1-8');
        expect((err as Error).message).toContain('alfred reindex');
      });

      it('should recreate an empty collection for a new embedder', async () => {
        await (await store.open(spec)).upsert([doc(a, 'd', 'text')]);
        const next = { ...spec, embedderId: 'other-model', dimension: 4 };
        const c = await store.recreate(next);
        expect(c.spec).toEqual(next);
        expect(await c.get(a, ['d'])).toEqual([]);
        await c.upsert([{ ...a, id: 'n', text: 'new', vector: new Float32Array([1, 0, 0, 0]), fields: {} }]);
        expect(await store.describe(spec.name)).toEqual({ embedderId: 'other-model', dimension: 4 });
        expect(ids(await (await store.open(next)).get(a, ['n']))).toEqual(['n']);
      });
    });

    describe('added fields, setFields and drop', () => {
      it('should add fields to a stored collection, null until set, and set some fields keeping the rest', async () => {
        await (await store.open(spec)).upsert([
          doc(a, 'old', 'written before the field existed', { importance: 0.25 }),
          doc(b, 'old', 'scope b'),
        ]);
        await store.close();
        store = await harness.create();
        const wider = {
          ...spec,
          fields: { ...spec.fields, via: 'string', flagged: 'boolean', written: 'number' },
        } as const;
        const c = await store.open(wider);
        expect((await c.get(a, ['old']))[0]!.fields).toMatchObject({
          importance: 0.25,
          via: null,
          flagged: null,
          written: null,
        });
        await c.setFields([
          { ...a, id: 'old', fields: { via: 'rest', flagged: false } },
          { ...a, id: 'missing', fields: { via: 'rest', flagged: true } },
          { ...b, id: 'old', fields: { written: 7 } },
        ]);
        expect((await c.get(a, ['old']))[0]).toMatchObject({
          text: 'written before the field existed',
          fields: { importance: 0.25, via: 'rest', flagged: false, written: null },
        });
        expect((await c.get(b, ['old']))[0]!.fields).toMatchObject({ via: null, written: 7 });
        expect(await c.get(a, ['missing'])).toEqual([]);
        const listed = await c.list(
          { ...a, where: [{ field: 'via', op: 'eq', value: 'rest' }] },
          { sortBy: 'id', order: 'asc', limit: 5, offset: 0 },
        );
        expect(ids(listed.docs)).toEqual(['old']);
        const found = await c.search(
          { ...a, where: [{ field: 'flagged', op: 'eq', value: false }] },
          { vector: axisVector(7), text: 'field', limit: 5, minScore: 0 },
        );
        expect(ids(found.hits.map((h) => h.doc))).toEqual(['old']);
        await c.upsert([doc(a, 'new', 'written after', { importance: 0.5 })]);
        expect((await c.get(a, ['new']))[0]!.fields).toMatchObject({ via: null });
        await c.setFields([{ ...a, id: 'new', fields: { flagged: true } }]);
        // `ne` lets documents without a value through: b's document was never given `flagged`.
        const notFlagged = [{ field: 'flagged', op: 'ne', value: true }] as const;
        const page = (s: typeof a) =>
          c
            .list({ ...s, where: notFlagged }, { sortBy: 'id', order: 'asc', limit: 5, offset: 0 })
            .then((r) => ids(r.docs));
        expect([await page(a), await page(b)]).toEqual([['old'], ['old']]);
        const searched = await c.search(
          { ...b, where: notFlagged },
          { vector: axisVector(7), text: 'scope', limit: 5, minScore: 0 },
        );
        expect(ids(searched.hits.map((h) => h.doc))).toEqual(['old']);
      });

      it('should refuse a field whose type changed, and drop a collection', async () => {
        await (await store.open(spec)).upsert([doc(a, 'd', 'text')]);
        await expect(
          store.open({ ...spec, name: spec.name, fields: { ...spec.fields, importance: 'string' } }),
        ).rejects.toMatchObject({ code: ErrorCode.Conflict });
        await store.drop(spec.name);
        expect(await store.describe(spec.name)).toBeUndefined();
        await store.drop(spec.name);
      });
    });

    describe('scanAll and persistence', () => {
      it('should page through every scope’s documents', async () => {
        const c = await store.open(spec);
        await c.upsert(
          [a, b, a2].flatMap((s, i) => [0, 1, 2].map((j) => doc(s, `s${i}${j}`, `doc ${i} ${j}`))).slice(0, 7),
        );
        const pages: StoredDoc[][] = [];
        for await (const p of c.scanAll(3)) pages.push(p);
        expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
        expect(ids(pages.flat()).sort()).toEqual(['s00', 's01', 's02', 's10', 's11', 's12', 's20']);
      });

      it('should keep documents across close and reopen', async () => {
        await (await store.open(spec)).upsert([doc(a, 'kept', 'persisted text', { tags: ['t'] })]);
        await store.close();
        store = await harness.create();
        const c = await store.open(spec);
        expect(await c.get(a, ['kept'])).toEqual([
          expect.objectContaining({ text: 'persisted text', fields: expect.objectContaining({ tags: ['t'] }) }),
        ]);
      });
    });
  });
}
