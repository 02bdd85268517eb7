import { HashingEmbedder, cosine } from './hashing.embedder.js';

describe(HashingEmbedder.name, () => {
  const embedder = new HashingEmbedder();

  describe('constructor', () => {
    it('should name itself after its dimension and call itself lexical', () => {
      expect(embedder.id).toBe('hash-v2-384');
      expect(embedder.kind).toBe('lexical');
      expect(new HashingEmbedder({ dimension: 64 }).id).toBe('hash-v2-64');
    });

    it('should refuse a nonsensical dimension', () => {
      expect(() => new HashingEmbedder({ dimension: 0 })).toThrow(RangeError);
    });
  });

  describe('embed', () => {
    it('should return unit vectors of the configured dimension', async () => {
      const [v] = await embedder.embed(['The quick brown fox']);
      expect(v).toHaveLength(384);
      expect(cosine(v!, v!)).toBeCloseTo(1, 5);
      const norm = Math.sqrt(v!.reduce((s, x) => s + x * x, 0));
      expect(norm).toBeCloseTo(1, 5);
    });

    it('should be deterministic across instances', async () => {
      const [a] = await embedder.embed(['Déjà vu: 東京 in the rain']);
      const [b] = await new HashingEmbedder().embed(['Déjà vu: 東京 in the rain']);
      expect(Array.from(a!)).toEqual(Array.from(b!));
    });

    it('should score texts sharing words above unrelated texts', async () => {
      const [q, near, far] = await embedder.embed([
        'user prefers dark mode in the editor',
        'the editor should use dark mode',
        'quarterly revenue grew by ten percent',
      ]);
      expect(cosine(q!, near!)).toBeGreaterThan(0.4);
      expect(cosine(q!, near!)).toBeGreaterThan(cosine(q!, far!) + 0.3);
    });

    it('should match inflections and case through stemming', async () => {
      const [a, b] = await embedder.embed(['Running tests', 'run the test']);
      expect(cosine(a!, b!)).toBeGreaterThan(0.5);
    });

    it('should give the zero vector for text without words', async () => {
      const [v] = await embedder.embed(['  ?!  ']);
      expect(v!.every((x) => x === 0)).toBe(true);
    });
  });
});
