import { fuseCandidates, saturate } from './fusion.js';
import type { StoredDoc } from './vector-store.js';

const doc = (id: string): StoredDoc => ({ id, tenant: 't', agent: 'a', text: id, fields: {} });

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

  describe(fuseCandidates.name, () => {
    const options = {
      text: 'q',
      limit: 10,
      minScore: 0,
      vector: new Float32Array([1]),
      fuse: (s: { lexical: number; dense?: number }) => (s.lexical + (s.dense ?? 0)) / 2,
    };

    it('should merge both sides of one doc and fuse its signals', () => {
      const { hits, total } = fuseCandidates(
        [
          { doc: doc('a'), cosine: 0.8 },
          { doc: doc('a'), bm25: 2 },
          { doc: doc('b'), cosine: 0.2 },
        ],
        options,
      );
      expect(total).toBe(2);
      expect(hits.map((h) => h.doc.id)).toEqual(['a', 'b']);
      expect(hits[0]!.signals).toEqual({ lexical: 0.5, dense: 0.8 });
      expect(hits[0]!.score).toBeCloseTo(0.65);
    });

    it('should drop hits under minScore and count only the survivors', () => {
      const { hits, total } = fuseCandidates(
        [
          { doc: doc('a'), cosine: 0.8 },
          { doc: doc('b'), cosine: 0.2 },
        ],
        { ...options, minScore: 0.3 },
      );
      expect(hits.map((h) => h.doc.id)).toEqual(['a']);
      expect(total).toBe(1);
    });

    it('should leave dense out without a query vector', () => {
      const { vector: _v, ...lexicalOnly } = options;
      const { hits } = fuseCandidates([{ doc: doc('a'), bm25: 2, cosine: 0.9 }], lexicalOnly);
      expect(hits[0]!.signals).toEqual({ lexical: 0.5 });
    });
  });
});
