/**
 * The signals a ranking is made of. Relevance signals say how well a candidate matches the query (each a
 * value in 0..1, fused by a weighted mean); adjustments move that relevance up or down by what is known
 * about the candidate regardless of the query (feedback, importance, age), each within a fixed bound so
 * that relevance stays in charge and the score stays in 0..1.
 */

/** Evidence about one candidate: what each signal reads. Absent evidence leaves a signal out. */
export interface Evidence {
  /** Lexical match in 0..1 (the index's BM25F, normalised by the query's upper bound). */
  readonly lexical?: number;
  /** Cosine similarity of query and candidate vectors, -1..1. */
  readonly dense?: number;
  /** The record's own importance, 0..1. */
  readonly importance?: number;
  /** Helpful / unhelpful reports. */
  readonly feedback?: { readonly helpful: number; readonly unhelpful: number };
  /** When the record was written (ms since the epoch). */
  readonly writtenAt?: number;
}

/** A relevance signal: its value for a candidate (0..1), or undefined when the candidate has no such evidence. */
export interface RelevanceSignal {
  readonly name: string;
  value(e: Evidence): number | undefined;
}

/**
 * An adjustment: maps a score to a score in 0..1, bounded so that `floor(minScore)` is the lowest score
 * it could lift to minScore (used to search the index from there).
 */
export interface Adjustment {
  readonly name: string;
  /** The evidence value shown in an explanation. */
  value(e: Evidence, now: number): number | undefined;
  apply(score: number, e: Evidence, now: number): number;
  floor(minScore: number): number;
  /** The least and most this adjustment can change `score` by, whatever the evidence (its bound, in score units). */
  reach?(score: number): { readonly min: number; readonly max: number };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

export const lexical: RelevanceSignal = { name: 'lexical', value: (e) => e.lexical };
export const dense: RelevanceSignal = {
  name: 'dense',
  value: (e) => (e.dense === undefined ? undefined : clamp01(e.dense)),
};

/**
 * A prior that scales a score by (1 - bound + bound · v) for a value v in 0..1: v = 1 keeps the score,
 * v = 0 keeps (1 - bound) of it. Absent evidence changes nothing.
 */
export function scalingPrior(
  name: string,
  bound: number,
  value: (e: Evidence, now: number) => number | undefined,
): Adjustment {
  return {
    name,
    value,
    apply: (score, e, now) => {
      const v = value(e, now);
      return v === undefined ? score : clamp01(score * (1 - bound + bound * clamp01(v)));
    },
    // It only ever lowers a score: nothing below minScore can reach it.
    floor: (minScore) => minScore,
    reach: (score) => ({ min: -bound * score, max: 0 }),
  };
}

/**
 * A prior from success/failure counts: the Laplace-smoothed success share p = (s + 1) / (s + f + 2), centred
 * as d = 2p - 1 in (-1, 1), lifts a score towards 1 by at most `maxLift` of the remaining gap (d > 0) or scales
 * it down by at most `maxDrop` (d < 0). No counts, or balanced counts, change nothing.
 */
export function balancePrior(
  name: string,
  counts: (e: Evidence) => { readonly success: number; readonly failure: number } | undefined,
  maxLift = 0.2,
  maxDrop = 0.2,
): Adjustment {
  const balance = (e: Evidence) => {
    const c = counts(e);
    return c === undefined ? undefined : 2 * ((c.success + 1) / (c.success + c.failure + 2)) - 1;
  };
  return {
    name,
    value: balance,
    apply: (score, e) => {
      const d = balance(e) ?? 0;
      return clamp01(d >= 0 ? score + (1 - score) * maxLift * d : score * (1 + maxDrop * d));
    },
    floor: (minScore) => Math.max(0, (minScore - maxLift) / (1 - maxLift)),
    reach: (score) => ({ min: -maxDrop * score, max: (1 - score) * maxLift }),
  };
}

/** Importance (0..1) keeps 90–100% of a score. */
export const importance = scalingPrior('importance', 0.1, (e) => e.importance);

/** Helpful/unhelpful reports move a score by at most 20% of its room either way. */
export const feedback = balancePrior('feedback', (e) =>
  e.feedback ? { success: e.feedback.helpful, failure: e.feedback.unhelpful } : undefined,
);

const DAY_MS = 86_400_000;
/**
 * How long until age halves the recency value; a month, so that this week's note beats last season's near-equal one.
 */
export const RECENCY_HALF_LIFE_MS = 30 * DAY_MS;

/** Recency: 2^(-age / half-life), which keeps 95–100% of a score (new records lose nothing). */
export const recency = scalingPrior('recency', 0.05, (e, now) =>
  e.writtenAt === undefined ? undefined : 2 ** (-Math.max(0, now - e.writtenAt) / RECENCY_HALF_LIFE_MS),
);
