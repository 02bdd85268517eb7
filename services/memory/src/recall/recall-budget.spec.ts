import type { RecallHit } from '#contracts';
import { fillBudget } from './recall-budget.js';

const hit = (id: string, score: number, tokens: number): RecallHit => ({ kind: 'memory', id, score, text: id, tokens });

describe(fillBudget.name, () => {
  it('should take hits in rank order while they fit', () => {
    const out = fillBudget([hit('a', 0.9, 10), hit('b', 0.8, 10), hit('c', 0.7, 10)], 25, 10);
    expect(out.results.map((h) => h.id)).toEqual(['a', 'b']);
    expect(out).toMatchObject({ used_tokens: 20, truncated: true });
  });

  it('should skip a hit too large for the rest and still take smaller ones after it', () => {
    const out = fillBudget([hit('a', 0.9, 10), hit('big', 0.8, 100), hit('c', 0.7, 5)], 20, 10);
    expect(out.results.map((h) => h.id)).toEqual(['a', 'c']);
    expect(out).toMatchObject({ used_tokens: 15, truncated: true });
  });

  it('should stop at the limit without calling that truncation', () => {
    const out = fillBudget([hit('a', 0.9, 1), hit('b', 0.8, 1), hit('c', 0.7, 1)], 100, 2);
    expect(out).toMatchObject({ used_tokens: 2, truncated: false });
    expect(out.results).toHaveLength(2);
  });
});
