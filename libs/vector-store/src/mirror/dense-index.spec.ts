import { DenseIndex, HNSW_MIN_DOCS } from './dense-index.js';

function vector(seed: number, dim = 16): Float32Array {
  const v = new Float32Array(dim);
  let x = seed * 9301 + 49297;
  for (let i = 0; i < dim; i++) {
    x = (x * 9301 + 49297) % 233280;
    v[i] = x / 233280 - 0.5;
  }
  return v;
}

describe(DenseIndex.name, () => {
  it('should find the nearest vectors exactly in a small scope, with filters', () => {
    const idx = new DenseIndex(16);
    for (let i = 0; i < 50; i++) idx.add(i, vector(i));
    expect(idx.nearest(vector(7), 1)[0]).toMatchObject({ slot: 7 });
    expect(idx.nearest(vector(7), 1)[0]!.cosine).toBeCloseTo(1, 5);
    expect(idx.nearest(vector(7), 3, (s) => s !== 7).map((n) => n.slot)).not.toContain(7);
    idx.remove(7);
    expect(idx.cosine(7, vector(7))).toBeUndefined();
    expect(idx.nearest(vector(7), 1)[0]!.slot).not.toBe(7);
  });

  it('should answer from its HNSW graph past the threshold and still honour removals', () => {
    const idx = new DenseIndex(16);
    for (let i = 0; i < HNSW_MIN_DOCS + 10; i++) idx.add(i, vector(i));
    expect(idx.nearest(vector(4321), 1)[0]!.slot).toBe(4321);
    idx.remove(4321);
    expect(idx.nearest(vector(4321), 5).map((n) => n.slot)).not.toContain(4321);
    expect(idx.size).toBe(HNSW_MIN_DOCS + 9);
  });
});
