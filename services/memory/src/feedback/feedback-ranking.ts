import type { FeedbackCounts } from '#contracts';

/**
 * How feedback moves a search score (the one place this is defined, for memories and remediations alike).
 *
 * The helpful share is Laplace-smoothed, p = (helpful + 1) / (helpful + unhelpful + 2), and centred,
 * d = 2p - 1 in (-1, 1): 0 without feedback or with balanced feedback, towards ±1 as consistent reports pile up.
 * A positive d lifts the score towards 1 by at most MAX_LIFT of the remaining gap; a negative d scales it
 * down by at most MAX_DROP. So scores stay in 0..1, no feedback changes nothing, and relevance still
 * dominates: feedback reorders near-equals but cannot lift an unrelated hit over a strong one.
 */
export const FEEDBACK_MAX_LIFT = 0.2;
export const FEEDBACK_MAX_DROP = 0.2;

export function feedbackBalance(counts: FeedbackCounts | undefined): number {
  if (!counts) return 0;
  const p = (counts.helpful + 1) / (counts.helpful + counts.unhelpful + 2);
  return 2 * p - 1;
}

/** The score after feedback, in 0..1. */
export function withFeedback(score: number, counts: FeedbackCounts | undefined): number {
  const d = feedbackBalance(counts);
  const adjusted = d >= 0 ? score + (1 - score) * FEEDBACK_MAX_LIFT * d : score * (1 + FEEDBACK_MAX_DROP * d);
  return Math.min(1, Math.max(0, adjusted));
}

/** The lowest raw score that feedback could still lift to `minScore`: search the store from there. */
export function rawFloorFor(minScore: number): number {
  return Math.max(0, (minScore - FEEDBACK_MAX_LIFT) / (1 - FEEDBACK_MAX_LIFT));
}
