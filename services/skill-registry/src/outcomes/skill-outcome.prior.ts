import type { Adjustment, Evidence } from '#ranking';

/**
 * The prior of the success estimate: Beta(PRIOR_SUCCESS, PRIOR_FAILURE), as if every skill had already
 * been used PRIOR_SUCCESS + PRIOR_FAILURE times with an even record. One failure moves a new skill from 0.5
 * to 0.43 and one success to 0.57: neither buries nor crowns it; twenty consistent outcomes move it to ~0.88.
 */
export const PRIOR_SUCCESS = 3;
export const PRIOR_FAILURE = 3;
/** The most a perfect (or hopeless) record moves a skill's search score: ±MAX_SHIFT of it. */
export const MAX_SHIFT = 0.3;

export function successEstimate(success: number, failure: number): number {
  return (success + PRIOR_SUCCESS) / (success + failure + PRIOR_SUCCESS + PRIOR_FAILURE);
}

/** Outcome counts reach the ranker as the feedback evidence (success as helpful, failure as unhelpful). */
export function outcomeEvidence(c: { success: number; failure: number } | undefined): Pick<Evidence, 'feedback'> {
  return c ? { feedback: { helpful: c.success, unhelpful: c.failure } } : {};
}

/**
 * Scales a skill's relevance by (1 + MAX_SHIFT · (2·estimate − 1)): an even record (or none) changes nothing,
 * a reliable skill gains up to MAX_SHIFT of its score, an unreliable one loses up to MAX_SHIFT.
 */
export const skillOutcomePrior: Adjustment = {
  name: 'outcomes',
  value: (e) => (e.feedback ? successEstimate(e.feedback.helpful, e.feedback.unhelpful) : undefined),
  apply: (score, e) => {
    if (!e.feedback) return score;
    const centred = 2 * successEstimate(e.feedback.helpful, e.feedback.unhelpful) - 1;
    return Math.min(1, Math.max(0, score * (1 + MAX_SHIFT * centred)));
  },
  // It can lift a score by at most (1 + MAX_SHIFT): searching from minScore / (1 + MAX_SHIFT) misses nothing.
  floor: (minScore) => minScore / (1 + MAX_SHIFT),
};
