import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LanceDbStore } from './lancedb.store.js';
import { ResidentBudget } from './mirror/resident-budget.js';
import type { CollectionSpec, Doc, DocScope } from './vector-store.js';

const spec: CollectionSpec = {
  name: 'notes',
  embedderId: 'test-v1-4',
  dimension: 4,
  fields: { n: 'number' },
  orderField: 'n',
};
const scopeOf = (i: number): DocScope => ({ tenant: 't', agent: `agent-${i}` });
const doc = (scope: DocScope, i: number): Doc => ({
  ...scope,
  id: `d${i}`,
  text: `walrus note ${i} of ${scope.agent}`,
  vector: new Float32Array([1, i, 0, 0]),
  fields: { n: i },
});
const searchAll = { text: 'walrus note', limit: 50, minScore: 0 };

describe('LanceDbCollection scopes in memory', () => {
  let dir: string;
  let store: LanceDbStore;
  let budget: ResidentBudget;
  const open = async (limit: number) => {
    budget = new ResidentBudget(limit);
    store = new LanceDbStore({ dir, budget, tuning: { flushDelayMs: 5 } });
    return store.open(spec);
  };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-resident-'));
    const seed = new LanceDbStore({ dir, budget: new ResidentBudget(1e9) });
    const c = await seed.open(spec);
    for (let s = 0; s < 6; s++) await c.upsert(Array.from({ length: 20 }, (_, i) => doc(scopeOf(s), i)));
    await seed.close();
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should open reading no scope, and load one on its first search, shared by concurrent searches', async () => {
    const c = await open(1e9);
    expect(budget.residentScopes).toBe(0);
    const results = await Promise.all(Array.from({ length: 8 }, () => c.search({ ...scopeOf(2) }, searchAll)));
    expect(results.map((r) => r.total)).toEqual(Array(8).fill(20));
    expect(budget.residentScopes).toBe(1);
    // Reading by id does not load a scope: a cold read is a read of those ids.
    expect((await c.get(scopeOf(4), ['d3', 'nope'])).map((d) => d.text)).toEqual(['walrus note 3 of agent-4']);
    expect(budget.residentScopes).toBe(1);
  });

  it('should read a cold scope once for a search with a vector, and rank by its dense signal at once', async () => {
    const c = await open(1e9);
    const table = (c as unknown as { table: { query(): unknown } }).table;
    const query = table.query.bind(table);
    let reads = 0;
    table.query = () => {
      reads++;
      return query();
    };

    const { hits } = await c.search({ ...scopeOf(3) }, { ...searchAll, vector: new Float32Array([1, 7, 0, 0]) });

    expect(reads).toBe(1);
    expect(hits).toHaveLength(20);
    expect(hits.every((h) => h.signals.dense !== undefined)).toBe(true);
    // Nearest to [1, 7, 0, 0] by cosine: d7, then its neighbours.
    const byDense = [...hits].sort((a, b) => b.signals.dense! - a.signals.dense!);
    expect(byDense[0]!.doc.id).toBe('d7');
  });

  it('should stay within the budget by dropping the least recently used scope, and load it whole again', async () => {
    const c = await open(1);
    await c.search({ ...scopeOf(0) }, searchAll);
    const bytesOfOne = budget.residentBytes;
    budget.setLimit(bytesOfOne * 2.5);
    await c.search({ ...scopeOf(1) }, searchAll);
    await c.search({ ...scopeOf(0) }, searchAll);
    await c.search({ ...scopeOf(2) }, searchAll);
    // 0 was used after 1, so 1 went.
    expect(budget.residentScopes).toBe(2);
    expect(budget.residentBytes).toBeLessThanOrEqual(bytesOfOne * 2.5);
    // Written while out of memory: the write is there when the scope comes back.
    c.journal!.prepare({
      kind: 'upsert',
      docs: [{ ...doc(scopeOf(1), 99), text: 'walrus note written while evicted' }],
    }).apply();
    const back = await c.search({ ...scopeOf(1) }, { ...searchAll, text: 'evicted' });
    expect(back.hits[0]!.doc).toMatchObject({ id: 'd99', text: 'walrus note written while evicted' });
    expect((await c.search({ ...scopeOf(1) }, searchAll)).total).toBe(21);
  });

  it('should answer every search whole while scopes are loaded, dropped and written at once', async () => {
    const c = await open(1);
    await c.search({ ...scopeOf(0) }, searchAll);
    const bytesOfOne = budget.residentBytes;
    budget.setLimit(bytesOfOne * 1.5);
    const expected = [20, 20, 20, 20, 20, 20];
    const work: Array<Promise<unknown>> = [];
    for (let round = 0; round < 20; round++) {
      const s = round % 6;
      work.push(
        c.search({ ...scopeOf(s) }, searchAll).then((r) => expect(r.total).toBeGreaterThanOrEqual(expected[s]!)),
      );
      if (round % 4 === 0) {
        const added = 100 + round;
        expected[s]!++;
        c.journal!.prepare({ kind: 'insert', docs: [doc(scopeOf(s), added)] }).apply();
      }
      if (round % 7 === 0)
        work.push(c.upsert([doc(scopeOf((s + 1) % 6), 200 + round)]).then(() => void expected[(s + 1) % 6]!++));
    }
    await Promise.all(work);
    for (let s = 0; s < 6; s++) expect((await c.search({ ...scopeOf(s) }, searchAll)).total).toBe(expected[s]);
    expect(budget.residentScopes).toBe(1);
  });
});
