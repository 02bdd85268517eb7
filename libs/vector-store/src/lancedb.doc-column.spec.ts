import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { LanceDbStore } from './lancedb.store.js';
import { ResidentBudget } from './mirror/resident-budget.js';
import type { CollectionSpec, Doc, DocScope, StoredDoc } from './vector-store.js';

const spec: CollectionSpec = {
  name: 'notes',
  embedderId: 'test-v1-4',
  dimension: 4,
  fields: { n: 'number', kind: 'string', tags: 'string[]', pinned: 'boolean' },
};
const scope: DocScope = { tenant: 't', agent: 'alfred' };
/** Documents with every kind of field value: set, null, empty, false, with and without context. */
const docs: Doc[] = Array.from({ length: 12 }, (_, i) => ({
  ...scope,
  id: `d${i}`,
  text: `walrus note ${i} “quoted” \\ ${'é'.repeat(i)}`,
  ...(i % 3 === 0 ? { context: `said in session ${i}` } : {}),
  vector: new Float32Array([1, i, 0, 0]),
  fields: {
    n: i % 4 === 0 ? null : i / 3,
    kind: i % 5 === 0 ? null : `kind-${i % 2}`,
    tags: i % 2 === 0 ? [] : [`t${i}`, 'shared'],
    pinned: i % 3 === 0 ? null : i % 2 === 0,
  },
}));
const everything = { text: 'walrus note', limit: 50, minScore: 0 };
const byId = (a: StoredDoc, b: StoredDoc) => a.id.localeCompare(b.id);

describe('LanceDbCollection cold loads from the doc column', () => {
  let dir: string;
  let store: LanceDbStore | undefined;
  const open = async (wanted: CollectionSpec = spec) => {
    store = new LanceDbStore({ dir, budget: new ResidentBudget(1e9), tuning: { flushDelayMs: 5 } });
    return store.open(wanted);
  };
  const reopen = async (wanted?: CollectionSpec) => {
    await store?.close();
    return open(wanted);
  };
  /** The scope's documents as a cold search finds them, and as whole rows (the columns) list them. */
  const bothWays = async (c: Awaited<ReturnType<typeof open>>) => {
    const searched = (await c.search({ ...scope }, everything)).hits.map((h) => h.doc).sort(byId);
    const listed = (await c.list({ ...scope }, { sortBy: 'id', order: 'asc', limit: 100, offset: 0 })).docs;
    return { searched, listed: [...listed].sort(byId) };
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-doc-column-'));
    const c = await open();
    await c.upsert(docs);
  });
  afterEach(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should load a cold scope with the same documents the columns hold, reading only ids and docs', async () => {
    const c = await reopen();
    const table = (c as unknown as { table: { query(): { select(c: string[]): unknown } } }).table;
    const query = table.query.bind(table);
    const selected: string[][] = [];
    table.query = () => {
      const q = query();
      const select = q.select.bind(q);
      q.select = (columns: string[]) => {
        selected.push(columns);
        return select(columns);
      };
      return q;
    };
    const { searched } = await bothWays(c);
    expect(selected[0]).toEqual(['id', 'doc']);
    table.query = query;
    const { listed } = await bothWays(c);
    expect(searched).toHaveLength(12);
    expect(searched).toEqual(listed);
    expect(searched.find((d) => d.id === 'd3')).toEqual({
      ...scope,
      id: 'd3',
      text: 'walrus note 3 “quoted” \\ ééé',
      context: 'said in session 3',
      fields: { n: 1, kind: 'kind-1', tags: ['t3', 'shared'], pinned: null },
    });
  });

  it('should give fields added to the spec since a row was written null, as the columns do', async () => {
    const wider: CollectionSpec = { ...spec, fields: { ...spec.fields, mood: 'string' } };
    const c = await reopen(wider);
    const { searched, listed } = await bothWays(c);
    expect(searched.every((d) => d.fields.mood === null)).toBe(true);
    expect(searched).toEqual(listed);
  });

  it('should keep the doc column current through field updates', async () => {
    const c = await reopen();
    await c.setFields([
      { ...scope, id: 'd1', fields: { kind: 'changed', pinned: true } },
      { ...scope, id: 'd2', fields: { tags: ['new'] } },
      { ...scope, id: 'd1', fields: { n: 42 } },
      { ...scope, id: 'nobody', fields: { n: 1 } },
    ]);
    const cold = await reopen();
    const { searched, listed } = await bothWays(cold);
    expect(searched).toEqual(listed);
    expect(searched.find((d) => d.id === 'd1')!.fields).toEqual({
      n: 42,
      kind: 'changed',
      tags: ['t1', 'shared'],
      pinned: true,
    });
    expect(searched.find((d) => d.id === 'd2')!.fields.tags).toEqual(['new']);
    expect(searched).toHaveLength(12);
  });

  it('should open a table made before the doc column, read its old rows from their columns, then fill it', async () => {
    await store?.close();
    store = undefined;
    const db = await connect(dir);
    const table = await db.openTable('notes');
    await table.dropColumns(['doc']);
    table.close();

    const c = await open();
    const { searched, listed } = await bothWays(c);
    expect(searched).toHaveLength(12);
    expect(searched).toEqual(listed);

    await c.upsert([{ ...docs[4]!, text: 'walrus note rewritten' }]);
    await c.setFields([{ ...scope, id: 'd5', fields: { kind: 'set later' } }]);
    await c.flush();
    const raw = await (await connect(dir)).openTable('notes');
    const cells = new Map(
      (await raw.query().select(['id', 'doc']).toArray()).map((r) => [r.id as string, r.doc as string | null]),
    );
    raw.close();
    expect(
      [...cells.entries()]
        .filter(([, d]) => d !== null)
        .map(([id]) => id)
        .sort(),
    ).toEqual(['d4', 'd5']);

    const cold = await reopen();
    const after = await bothWays(cold);
    expect(after.searched).toEqual(after.listed);
    expect(after.searched.find((d) => d.id === 'd4')!.text).toBe('walrus note rewritten');
    expect(after.searched.find((d) => d.id === 'd5')!.fields.kind).toBe('set later');
  });
});
