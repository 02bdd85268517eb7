import { BM25_K1, idf, termScore, upperBound } from './lexical-score.js';

describe('lexical score', () => {
  it('should give rarer terms a higher idf, always positive', () => {
    expect(idf(1000, 1)).toBeGreaterThan(idf(1000, 100));
    expect(idf(1000, 1000)).toBeGreaterThan(0);
  });

  it('should saturate term frequency and favour shorter documents', () => {
    expect(termScore(2, 1)).toBeGreaterThan(termScore(1, 1));
    expect(termScore(100, 1)).toBeLessThan(BM25_K1 + 1);
    expect(termScore(1, 0.5)).toBeGreaterThan(termScore(1, 2));
  });

  it('should bound every score by the upper bound', () => {
    const idfs = [idf(100, 3), idf(100, 40)];
    const best = idfs.reduce((s, x) => s + x * termScore(1e9, 0), 0);
    expect(best).toBeLessThanOrEqual(upperBound(idfs));
  });
});
