import { BM25_K1, CONTEXT_WEIGHT, NEIGHBOUR_WINDOW, SITTING_GAP_MS, idf, termScore } from '#ranking';
import { analyse } from '#text';
import { prng } from '../bench-data.js';
import { LexicalIndex } from './lexical-index.js';

const T0 = Date.UTC(2026, 0, 1);
const min = 60_000;

describe(LexicalIndex.name, () => {
  const search = (
    idx: LexicalIndex,
    text: string,
    more: { minScore?: number; pool?: number; accept?: (s: number) => boolean } = {},
  ) =>
    idx.search({
      text,
      pool: more.pool ?? 10,
      minScore: more.minScore ?? 0,
      ...(more.accept ? { accept: more.accept } : {}),
    });

  it('should rank by BM25 over analysed terms with scores in (0, 1)', () => {
    const idx = new LexicalIndex();
    idx.add(0, { text: 'The cat sat on the mat' });
    idx.add(1, { text: 'Cats and dogs, dogs and cats' });
    idx.add(2, { text: 'A quarterly revenue report' });
    const r = search(idx, 'cats');
    expect(r.top.map((t) => t.slot)).toEqual([1, 0]);
    expect(r.total).toBe(2);
    for (const t of r.top) {
      expect(t.score).toBeGreaterThan(0);
      expect(t.score).toBeLessThan(1);
    }
    expect(r.scoreOf(2)).toBe(0);
    expect(r.scoreOf(1)).toBeCloseTo(r.top[0]!.score, 12);
  });

  it('should count only scores at or above minScore and only accepted slots', () => {
    const idx = new LexicalIndex();
    ['okapi okapi okapi', 'okapi in a long sentence about many other things entirely', 'nothing'].forEach((text, i) => {
      idx.add(i, { text });
    });
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
    expect(
      r.top
        .map((t) => t.slot)
        .slice(0, 2)
        .sort(),
    ).toEqual([0, 1]);
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
    ['alpha', 'bridge', 'gamma'].forEach((text, i) => {
      idx.add(i, { text, order: T0 + i });
    });
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

/**
 * The index against a brute-force BM25F written from the definition (#ranking's lexical-score), on random
 * documents with neighbours, stored context, sitting gaps, removals and re-adds, with the frozen postings
 * rebuilt on every search, never, or now and then.
 */
describe(`${LexicalIndex.name} against a brute-force reference`, () => {
  const VOCAB = (
    'amber basil cedar delta ember fjord gravel harbor indigo juniper kelp lagoon maple nectar opal pebble ' +
    'quartz raven saffron tundra'
  ).split(' ');

  interface RefDoc {
    text: string;
    context?: string;
    order?: number;
  }

  /** Every live document's normalised score for `query`, computed from scratch. */
  function reference(docs: Map<number, RefDoc>, query: string): Map<number, number> {
    const own = new Map([...docs].map(([slot, d]) => [slot, analyse(d.text)]));
    const ctx = new Map([...docs].map(([slot, d]) => [slot, d.context ? analyse(d.context) : []]));
    // Sequential documents in write order; neighbours within the window, not across a sitting gap.
    const seq = [...docs]
      .filter(([, d]) => d.order !== undefined && !d.context)
      .sort((x, y) => x[1].order! - y[1].order!);
    const neighbours = new Map<number, number[]>();
    seq.forEach(([slot], i) => {
      const out: number[] = [];
      for (const dir of [-1, 1])
        for (let k = 1, at = i; k <= NEIGHBOUR_WINDOW; k++) {
          const nextAt = at + dir;
          if (
            nextAt < 0 ||
            nextAt >= seq.length ||
            Math.abs(seq[nextAt]![1].order! - seq[at]![1].order!) > SITTING_GAP_MS
          )
            break;
          out.push(seq[nextAt]![0]);
          at = nextAt;
        }
      neighbours.set(slot, out);
    });
    const effLen = new Map(
      [...docs.keys()].map((slot) => [
        slot,
        own.get(slot)!.length +
          CONTEXT_WEIGHT *
            (ctx.get(slot)!.length + (neighbours.get(slot) ?? []).reduce((n, nb) => n + own.get(nb)!.length, 0)),
      ]),
    );
    const avg = [...effLen.values()].reduce((a, b) => a + b, 0) / Math.max(1, docs.size) || 1;
    const terms = [...new Set(analyse(query))].filter((t) =>
      [...docs.keys()].some((s) => own.get(s)!.includes(t) || ctx.get(s)!.includes(t)),
    );
    const idfs = terms.map((t) =>
      idf(docs.size, [...docs.keys()].filter((s) => own.get(s)!.includes(t) || ctx.get(s)!.includes(t)).length),
    );
    const bound = idfs.reduce((a, b) => a + b, 0) * (BM25_K1 + 1);
    const count = (words: readonly string[], t: string) => words.filter((w) => w === t).length;
    const scores = new Map<number, number>();
    for (const slot of docs.keys()) {
      let score = 0;
      terms.forEach((t, i) => {
        const tf =
          count(own.get(slot)!, t) +
          CONTEXT_WEIGHT *
            (count(ctx.get(slot)!, t) + (neighbours.get(slot) ?? []).reduce((n, nb) => n + count(own.get(nb)!, t), 0));
        if (tf > 0) score += idfs[i]! * termScore(tf, effLen.get(slot)! / avg);
      });
      scores.set(slot, bound > 0 ? score / bound : 0);
    }
    return scores;
  }

  /** The index's top list equals the reference's best `pool` (scores to 1e-9; tied scores may swap slots). */
  function expectSameTop(
    idx: LexicalIndex,
    docs: Map<number, RefDoc>,
    query: string,
    pool: number,
    accept?: (slot: number) => boolean,
    minScore = 0,
  ) {
    const ref = reference(docs, query);
    const want = [...ref]
      .filter(([slot, s]) => s > 0 && s >= minScore && (!accept || accept(slot)))
      .sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    const got = idx.search({ text: query, pool, minScore, ...(accept ? { accept } : {}) });
    expect(got.top.length).toBe(Math.min(pool, want.length));
    got.top.forEach(({ slot, score }, i) => {
      expect(score).toBeCloseTo(want[i]![1], 9);
      expect(ref.get(slot)!).toBeCloseTo(score, 9);
    });
    expect(got.total).toBeGreaterThanOrEqual(got.top.length);
    expect(got.total).toBeLessThanOrEqual(want.length);
    for (const slot of [...docs.keys()].slice(0, 20)) expect(got.scoreOf(slot)).toBeCloseTo(ref.get(slot)!, 9);
  }

  it.each([
    ['frozen before every search', () => 0],
    ['never frozen (live records only)', () => Number.POSITIVE_INFINITY],
    ['frozen now and then', () => 25],
  ])('should return the exact best pool when %s', (_name, staleLimit) => {
    const random = prng(11);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    // Skewed word choice, so some words are in most documents and some in few.
    const text = (n: number) =>
      Array.from({ length: n }, () => VOCAB[Math.floor(VOCAB.length * random() ** 2)]!).join(' ');
    const idx = new LexicalIndex({ staleLimit });
    const docs = new Map<number, RefDoc>();
    let clock = T0;
    const addAt = (slot: number) => {
      clock += random() < 0.1 ? 40 * min : Math.floor(random() * 5 * min) + 1;
      const r = random();
      const doc: RefDoc =
        r < 0.15
          ? { text: text(3 + Math.floor(random() * 8)), context: text(6) }
          : r < 0.2
            ? { text: text(4) }
            : { text: text(2 + Math.floor(random() * 12)), order: clock };
      docs.set(slot, doc);
      idx.add(slot, doc);
    };
    const removeAt = (slot: number) => {
      idx.remove(slot);
      docs.delete(slot);
    };
    // Slots over several of the query's windows (4,096 slots each): dense in the first, sparse after.
    const slotOf = (i: number) => (i < 150 ? i : 150 + (i - 150) * 97);
    for (let i = 0; i < 300; i++) addAt(slotOf(i));
    for (let round = 0; round < 30; round++) {
      for (let k = 0; k < 8; k++) {
        const slot = slotOf(Math.floor(random() * 300));
        if (docs.has(slot) && random() < 0.6) removeAt(slot);
        else {
          if (docs.has(slot)) removeAt(slot);
          addAt(slot);
        }
      }
      expect(idx.size).toBe(docs.size);
      const query = `${text(1 + Math.floor(random() * 5))} ${pick(['', 'unknownword', VOCAB[VOCAB.length - 1]!])}`;
      const pool = pick([1, 5, 10, 50, 400]);
      expectSameTop(idx, docs, query, pool);
      expectSameTop(idx, docs, query, pool, (slot) => slot % 3 !== 0);
      expectSameTop(idx, docs, query, pool, undefined, 0.2);
    }
  });
});
