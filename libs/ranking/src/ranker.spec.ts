import { candidatePool, memoryProfile, Ranker, remediationProfile, skillProfile } from './ranker.js';
import { balancePrior, RECENCY_HALF_LIFE_MS, type Evidence } from './signals.js';

const NOW = Date.UTC(2026, 10, 1);
const ranked = (ranker: Ranker, candidates: Record<string, Evidence>, minScore = 0) =>
  ranker
    .rank(
      Object.entries(candidates).map(([item, evidence]) => ({ item, evidence })),
      { minScore, limit: 10, key: (s) => s },
    )
    .hits.map((h) => h.item);

describe(Ranker.name, () => {
  const lexicalEmbedder = new Ranker(memoryProfile('lexical'), () => NOW);
  const semanticEmbedder = new Ranker(memoryProfile('semantic'), () => NOW);

  describe('relevance', () => {
    it('should rank by the lexical signal alone with a lexical embedder (its cosine is the same words again)', () => {
      expect(lexicalEmbedder.uses('dense')).toBe(false);
      expect(ranked(lexicalEmbedder, { a: { lexical: 0.4, dense: 0.1 }, b: { lexical: 0.3, dense: 0.9 } })).toEqual([
        'a',
        'b',
      ]);
      expect(lexicalEmbedder.relevance({ lexical: 0.4, dense: 0.9 })).toBe(0.4);
    });

    it('should let a semantic neighbour without shared words rank with a semantic embedder', () => {
      expect(semanticEmbedder.uses('dense')).toBe(true);
      expect(
        ranked(semanticEmbedder, { words: { lexical: 0.3, dense: 0.2 }, meaning: { lexical: 0, dense: 0.9 } }),
      ).toEqual(['meaning', 'words']);
      expect(semanticEmbedder.relevance({ lexical: 0.4, dense: 0.8 })).toBeCloseTo(0.6);
    });

    it('should fuse only the signals a candidate has', () => {
      expect(semanticEmbedder.relevance({ lexical: 0.4 })).toBe(0.4);
      expect(semanticEmbedder.relevance({})).toBe(0);
      expect(semanticEmbedder.relevance({ lexical: 0.2, dense: -0.5 })).toBeCloseTo(0.1);
    });
  });

  describe('adjustments', () => {
    const base = { lexical: 0.5, writtenAt: NOW };

    it('should put the more important of two equal matches first, keeping at least 90% of a score', () => {
      expect(
        ranked(lexicalEmbedder, { low: { ...base, importance: 0.1 }, high: { ...base, importance: 0.9 } }),
      ).toEqual(['high', 'low']);
      expect(lexicalEmbedder.score({ ...base, importance: 0 })).toBeCloseTo(0.45);
      expect(lexicalEmbedder.score({ ...base, importance: 1 })).toBeCloseTo(0.5);
    });

    it('should put the newer of two equal matches first, and never let age beat relevance by more than 5%', () => {
      const old = { ...base, importance: 1, writtenAt: NOW - 4 * RECENCY_HALF_LIFE_MS };
      expect(ranked(lexicalEmbedder, { old, fresh: { ...base, importance: 1 } })).toEqual(['fresh', 'old']);
      expect(lexicalEmbedder.score({ ...old, writtenAt: 0 })).toBeGreaterThanOrEqual(0.5 * 0.95 - 1e-9);
      expect(ranked(lexicalEmbedder, { old: { ...old, lexical: 0.6 }, fresh: { ...base, importance: 1 } })).toEqual([
        'old',
        'fresh',
      ]);
    });

    it('should lift helpful and lower unhelpful memories, flipping near-equals but not strong differences', () => {
      const e = { ...base, importance: 1 };
      expect(
        ranked(lexicalEmbedder, {
          a: { ...e, lexical: 0.51, feedback: { helpful: 0, unhelpful: 2 } },
          b: { ...e, feedback: { helpful: 2, unhelpful: 0 } },
        }),
      ).toEqual(['b', 'a']);
      expect(
        ranked(lexicalEmbedder, {
          a: { ...e, lexical: 0.9, feedback: { helpful: 0, unhelpful: 50 } },
          b: { ...e, lexical: 0.3, feedback: { helpful: 50, unhelpful: 0 } },
        }),
      ).toEqual(['a', 'b']);
      expect(lexicalEmbedder.score({ ...e, feedback: { helpful: 3, unhelpful: 3 } })).toBeCloseTo(0.5);
      expect(lexicalEmbedder.score({ ...e, feedback: { helpful: 1e6, unhelpful: 0 } })).toBeLessThanOrEqual(0.6 + 1e-9);
    });

    it('should apply only the adjustments of a profile', () => {
      const remediations = new Ranker(remediationProfile('lexical'), () => NOW);
      expect(remediations.score({ lexical: 0.5, importance: 0 })).toBe(0.5);
      expect(remediations.score({ lexical: 0.5, feedback: { helpful: 4, unhelpful: 0 } })).toBeGreaterThan(0.5);
      const skills = new Ranker(skillProfile('lexical'), () => NOW);
      expect(skills.score({ lexical: 0.5, importance: 0, feedback: { helpful: 0, unhelpful: 9 } })).toBe(0.5);
    });

    it('should take a new signal as one more adjustment (e.g. a skill outcome rate)', () => {
      const outcome = balancePrior(
        'outcome',
        (e) => (e as Evidence & { outcome?: { success: number; failure: number } }).outcome,
      );
      const withOutcome = new Ranker({ ...skillProfile('lexical'), adjustments: [outcome] }, () => NOW);
      const evidence = { lexical: 0.5, outcome: { success: 9, failure: 1 } } as Evidence;
      expect(withOutcome.score(evidence)).toBeGreaterThan(0.5);
      expect(withOutcome.explain(evidence).explanation.map((c) => c.signal)).toEqual(['lexical', 'outcome']);
    });
  });

  describe('explain', () => {
    it('should break a score into per-signal parts that add up to it', () => {
      const e = {
        lexical: 0.6,
        dense: 0.2,
        importance: 0.3,
        writtenAt: NOW - RECENCY_HALF_LIFE_MS,
        feedback: { helpful: 3, unhelpful: 0 },
      };
      const { score, explanation } = semanticEmbedder.explain(e);
      expect(score).toBeCloseTo(semanticEmbedder.score(e), 12);
      expect(explanation.map((c) => c.signal)).toEqual(['lexical', 'dense', 'importance', 'recency', 'feedback']);
      expect(explanation.reduce((s, c) => s + c.contribution, 0)).toBeCloseTo(score, 12);
      expect(explanation[0]).toEqual({
        signal: 'lexical',
        kind: 'relevance',
        value: 0.6,
        weight: 0.5,
        bound: { min: 0, max: 0.5 },
        contribution: 0.3,
      });
      expect(explanation[2]!.contribution).toBeLessThan(0);
      expect(explanation[3]!.value).toBeCloseTo(0.5);
      expect(explanation[4]!.contribution).toBeGreaterThan(0);
    });

    it('should bound each adjustment by the score it moved: importance keeps 90-100%, feedback moves ≤ 20%', () => {
      const relevance = 0.4;
      const { explanation } = lexicalEmbedder.explain({
        lexical: relevance,
        importance: 0.5,
        feedback: { helpful: 0, unhelpful: 4 },
      });
      const [, importance, feedback] = explanation;
      expect(importance).toMatchObject({ signal: 'importance', kind: 'adjustment', value: 0.5 });
      expect(importance!.bound!.min).toBeCloseTo(-0.1 * relevance, 12);
      expect(importance!.bound!.max).toBe(0);
      expect(importance!.contribution).toBeCloseTo(-0.05 * relevance, 12);
      // Feedback acts on the score importance left.
      const before = relevance + importance!.contribution;
      expect(feedback!.bound!.min).toBeCloseTo(-0.2 * before, 12);
      expect(feedback!.bound!.max).toBeCloseTo(0.2 * (1 - before), 12);
      expect(feedback!.contribution).toBeGreaterThanOrEqual(feedback!.bound!.min);
      expect(feedback!.contribution).toBeLessThan(0);
    });
  });

  describe('relevanceFloor', () => {
    it('should be the lowest relevance that the largest lifts bring to min_score', () => {
      const floor = lexicalEmbedder.relevanceFloor(0.5);
      expect(floor).toBeLessThan(0.5);
      expect(
        lexicalEmbedder.score({
          lexical: floor,
          importance: 1,
          writtenAt: NOW,
          feedback: { helpful: 1e9, unhelpful: 0 },
        }),
      ).toBeGreaterThanOrEqual(0.5 - 1e-6);
      expect(lexicalEmbedder.relevanceFloor(0)).toBe(0);
    });
  });

  describe('rank', () => {
    it('should drop zero and sub-min_score hits, cut to limit and say how many it dropped', () => {
      const candidates = ['a', 'b', 'c', 'd'].map((item, i) => ({
        item,
        evidence: { lexical: i * 0.2, importance: 1, writtenAt: NOW },
      }));
      const out = lexicalEmbedder.rank(candidates, { minScore: 0.3, limit: 1, key: (s) => s, explain: true });
      expect(out.hits.map((h) => h.item)).toEqual(['d']);
      expect(out.dropped).toBe(2);
      expect(out.hits[0]!.explanation).toBeDefined();
      expect(candidatePool(10)).toBeGreaterThanOrEqual(50);
    });
  });
});
