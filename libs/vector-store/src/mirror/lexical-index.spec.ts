import { LexicalIndex } from './lexical-index.js';

const T0 = Date.UTC(2026, 0, 1);
const min = 60_000;

describe(LexicalIndex.name, () => {
  const search = (idx: LexicalIndex, text: string, more: { minScore?: number; pool?: number; accept?: (s: number) => boolean } = {}) =>
    idx.search({ text, pool: more.pool ?? 10, minScore: more.minScore ?? 0, ...(more.accept ? { accept: more.accept } : {}) });

  it('should rank by BM25 over analysed terms with scores in (0, 1)', () => {
    const idx = new LexicalIndex();
    idx.add(0, { text: 'The cat sat on the mat' });
    idx.add(1, { text: 'Cats and dogs, dogs and cats' });
    idx.add(2, { text: 'A quarterly revenue report' });
    const r = search(idx, 'cats');
    expect(r.top.map((t) => t.slot)).toEqual([1, 0]);
    expect(r.total).toBe(2);
    for (const t of r.top) expect(t.score).toBeGreaterThan(0), expect(t.score).toBeLessThan(1);
    expect(r.scoreOf(2)).toBe(0);
    expect(r.scoreOf(1)).toBeCloseTo(r.top[0]!.score, 12);
  });

  it('should count only scores at or above minScore and only accepted slots', () => {
    const idx = new LexicalIndex();
    ['okapi okapi okapi', 'okapi in a long sentence about many other things entirely', 'nothing'].forEach((text, i) => idx.add(i, { text }));
    const all = search(idx, 'okapi');
    expect(search(idx, 'okapi', { minScore: all.top[0]!.score }).total).toBe(1);
    expect(search(idx, 'okapi', { accept: (s) => s !== 0 }).top.map((t) => t.slot)).toEqual([1]);
  });

  it('should find a memory through its neighbours in write order, at less than its own words', () => {
    const idx = new LexicalIndex();
    idx.add(0, { text: 'We adopted a puppy', order: T0 });
    idx.add(1, { text: 'What is its name?', order: T0 + min });
    idx.add(2, { text: 'Biscuit, after the colour', order: T0 + 2 * min });
    const r = search(idx, 'puppy name');
    expect(r.top.map((t) => t.slot).slice(0, 2).sort()).toEqual([0, 1]);
    expect(r.scoreOf(2)).toBeGreaterThan(0);
    expect(r.scoreOf(2)).toBeLessThan(r.scoreOf(0));
  });

  it('should not take neighbours from another sitting or from documents with stored context', () => {
    const idx = new LexicalIndex();
    idx.add(0, { text: 'puppy', order: T0 });
    idx.add(1, { text: 'unrelated', order: T0 + 31 * min });
    idx.add(2, { text: 'also unrelated', context: 'chat about a puppy' });
    idx.add(3, { text: 'filler', order: T0 + 32 * min });
    const r = search(idx, 'puppy');
    expect(r.scoreOf(1)).toBe(0);
    expect(r.scoreOf(3)).toBe(0);
    expect(r.scoreOf(2)).toBeGreaterThan(0);
    expect(r.scoreOf(2)).toBeLessThan(r.scoreOf(0));
  });

  it('should forget a removed document and relink its neighbours', () => {
    const idx = new LexicalIndex();
    ['alpha', 'bridge', 'gamma'].forEach((text, i) => idx.add(i, { text, order: T0 + i }));
    expect(search(idx, 'alpha').scoreOf(1)).toBeGreaterThan(0);
    idx.remove(1);
    expect(idx.size).toBe(2);
    expect(search(idx, 'bridge').total).toBe(0);
    expect(search(idx, 'alpha').scoreOf(2)).toBeGreaterThan(0);
    idx.add(1, { text: 'bridge again', order: T0 + 1 });
    expect(search(idx, 'bridge').top[0]!.slot).toBe(1);
  });

  it('should keep the best pool exact when rare terms prune common ones (MaxScore)', () => {
    const idx = new LexicalIndex();
    for (let i = 0; i < 400; i++) idx.add(i, { text: `common words ${i % 7 === 0 ? 'rare' : ''} filler ${i}` });
    const pruned = search(idx, 'rare common words', { pool: 5 });
    const exhaustive = search(idx, 'rare common words', { pool: 400 });
    expect(pruned.top).toEqual(exhaustive.top.slice(0, 5));
  });
});
