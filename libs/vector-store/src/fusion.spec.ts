import { DEFAULT_FUSION, fuse, fuseScore, saturate } from './fusion.js';

describe('fusion', () => {
  describe(saturate.name, () => {
    it('should map 0 and negatives to 0, k to 0.5 and large scores towards 1', () => {
      expect(saturate(0, 2)).toBe(0);
      expect(saturate(-1, 2)).toBe(0);
      expect(saturate(Number.NaN, 2)).toBe(0);
      expect(saturate(2, 2)).toBe(0.5);
      expect(saturate(1000, 2)).toBeGreaterThan(0.99);
      expect(saturate(1000, 2)).toBeLessThan(1);
    });
  });

  describe(fuseScore.name, () => {
    it('should weigh dense and lexical evidence and stay within 0..1', () => {
      expect(fuseScore(1, undefined)).toBeCloseTo(DEFAULT_FUSION.denseWeight);
      expect(fuseScore(undefined, 2)).toBeCloseTo((1 - DEFAULT_FUSION.denseWeight) * 0.5);
      expect(fuseScore(1, 1e9)).toBeLessThanOrEqual(1);
      expect(fuseScore(1, 1e9)).toBeGreaterThan(0.99);
      expect(fuseScore(-0.5, undefined)).toBe(0);
      expect(fuseScore(undefined, undefined)).toBe(0);
    });

    it('should rank a doc with both kinds of evidence above one with either alone', () => {
      expect(fuseScore(0.6, 3)).toBeGreaterThan(fuseScore(0.6, undefined));
      expect(fuseScore(0.6, 3)).toBeGreaterThan(fuseScore(undefined, 3));
    });
  });

  describe(fuse.name, () => {
    const key = (s: string) => s;

    it('should merge the same doc from both sides into one hit', () => {
      const out = fuse([{ item: 'a', cosine: 0.5 }, { item: 'a', bm25: 4 }, { item: 'b', cosine: 0.4 }], key, 0);
      expect(out.map((h) => h.item)).toEqual(['a', 'b']);
      expect(out[0]!.score).toBeCloseTo(fuseScore(0.5, 4));
    });

    it('should drop hits below minScore and zero-score hits', () => {
      const out = fuse([{ item: 'a', cosine: 0.9 }, { item: 'b', cosine: 0.1 }, { item: 'c', cosine: -0.2 }], key, 0.3);
      expect(out.map((h) => h.item)).toEqual(['a']);
      expect(fuse([{ item: 'c', cosine: -0.2 }], key, 0)).toEqual([]);
    });

    it('should break score ties by key for a stable order', () => {
      const out = fuse([{ item: 'b', cosine: 0.5 }, { item: 'a', cosine: 0.5 }], key, 0);
      expect(out.map((h) => h.item)).toEqual(['a', 'b']);
    });
  });
});
