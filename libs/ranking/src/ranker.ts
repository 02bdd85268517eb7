import {
  dense,
  feedback,
  importance,
  lexical,
  recency,
  type Adjustment,
  type Evidence,
  type RelevanceSignal,
} from './signals.js';

/** One signal's part in a score: its evidence value and how much of the final score it accounts for. */
export interface SignalContribution {
  readonly signal: string;
  /** Relevance signals add their weighted share; adjustments move the score within their bound. */
  readonly kind: 'relevance' | 'adjustment';
  readonly value: number;
  /** Relevance signals: the signal's share of the relevance (its weight over the weights present). */
  readonly weight?: number;
  /** The least and most this signal could have contributed to this score. */
  readonly bound?: { readonly min: number; readonly max: number };
  /**
   * Relevance signals: weight share × value; adjustments: the score change they made. The contributions sum to the
   * score.
   */
  readonly contribution: number;
}

export interface Scored {
  readonly score: number;
  readonly explanation: readonly SignalContribution[];
}

/** What a ranking is made of: weighted relevance signals, then adjustments applied in order. */
export interface RankingProfile {
  readonly relevance: ReadonlyArray<{ readonly signal: RelevanceSignal; readonly weight: number }>;
  readonly adjustments: readonly Adjustment[];
}

/**
 * How many candidates a store brings for a page of `limit`: enough that the adjustments (bounded) can reorder
 * the page from beyond it.
 */
export const candidatePool = (limit: number) => Math.max(limit * 5, 50);

/**
 * How an embedder's vectors count: a lexical (hashing) embedder repeats the lexical signal, so its cosine gets no
 * weight.
 */
export type EmbedderKind = 'semantic' | 'lexical';

export function relevanceSignals(kind: EmbedderKind): RankingProfile['relevance'] {
  return [
    { signal: lexical, weight: 1 },
    { signal: dense, weight: kind === 'semantic' ? 1 : 0 },
  ];
}

/** Memories: relevance, then importance, age and feedback. */
export const memoryProfile = (kind: EmbedderKind): RankingProfile => ({
  relevance: relevanceSignals(kind),
  adjustments: [importance, recency, feedback],
});
/** Remediations: relevance, then feedback on the fix. */
export const remediationProfile = (kind: EmbedderKind): RankingProfile => ({
  relevance: relevanceSignals(kind),
  adjustments: [feedback],
});
/** Skills: relevance alone. */
export const skillProfile = (kind: EmbedderKind): RankingProfile => ({
  relevance: relevanceSignals(kind),
  adjustments: [],
});

/**
 * Scores candidates from their evidence: relevance is the weighted mean of the relevance signals a candidate
 * has (in 0..1), then each adjustment moves it within its bound. Every search of Alfred (memories, /recall,
 * remediations, skills) ranks through here, so a score means the same everywhere and can be explained.
 */
export class Ranker {
  constructor(
    readonly profile: RankingProfile,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Whether a relevance signal counts at all (dense does not for a lexical embedder: the caller can skip computing it).
   */
  uses(signal: string): boolean {
    return this.profile.relevance.some((r) => r.signal.name === signal && r.weight > 0);
  }

  /** The lowest relevance the adjustments could still lift to `minScore`: the index is searched from there. */
  relevanceFloor(minScore: number): number {
    return this.profile.adjustments.reduceRight((floor, a) => a.floor(floor), minScore);
  }

  /** The fused relevance in 0..1 (the weighted mean of the signals present). */
  relevance(e: Evidence): number {
    let sum = 0;
    let weights = 0;
    for (const { signal, weight } of this.profile.relevance) {
      const v = weight > 0 ? signal.value(e) : undefined;
      if (v === undefined) continue;
      sum += weight * v;
      weights += weight;
    }
    return weights === 0 ? 0 : sum / weights;
  }

  score(e: Evidence, now = this.clock()): number {
    let score = this.relevance(e);
    for (const a of this.profile.adjustments) score = a.apply(score, e, now);
    return score;
  }

  /** The score with each signal's part in it. */
  explain(e: Evidence, now = this.clock()): Scored {
    const explanation: SignalContribution[] = [];
    const present = this.profile.relevance.flatMap(({ signal, weight }) => {
      const v = weight > 0 ? signal.value(e) : undefined;
      return v === undefined ? [] : [{ name: signal.name, weight, v }];
    });
    const weights = present.reduce((s, p) => s + p.weight, 0);
    let score = 0;
    for (const p of present) {
      const share = p.weight / weights;
      const contribution = share * p.v;
      explanation.push({
        signal: p.name,
        kind: 'relevance',
        value: p.v,
        weight: share,
        bound: { min: 0, max: share },
        contribution,
      });
      score += contribution;
    }
    for (const a of this.profile.adjustments) {
      const value = a.value(e, now);
      if (value === undefined) continue;
      const after = a.apply(score, e, now);
      explanation.push({
        signal: a.name,
        kind: 'adjustment',
        value,
        ...(a.reach ? { bound: a.reach(score) } : {}),
        contribution: after - score,
      });
      score = after;
    }
    return { score, explanation };
  }

  /**
   * Scores, drops those under `minScore` (and zero scores), sorts best first (ties by key), keeps `limit`.
   * `dropped` is how many candidates fell under minScore, so a caller can correct a count made before adjusting.
   */
  rank<T>(
    candidates: ReadonlyArray<{ readonly item: T; readonly evidence: Evidence }>,
    options: {
      readonly minScore: number;
      readonly limit: number;
      readonly key: (item: T) => string;
      readonly explain?: boolean;
    },
  ): { hits: Array<{ item: T; score: number; explanation?: readonly SignalContribution[] }>; dropped: number } {
    const now = this.clock();
    const scored = candidates.map(({ item, evidence }) => {
      const s = options.explain ? this.explain(evidence, now) : { score: this.score(evidence, now) };
      return { item, key: options.key(item), ...s };
    });
    const kept = scored.filter((s) => s.score > 0 && s.score >= options.minScore);
    kept.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const hits = kept.slice(0, options.limit).map(({ key: _key, ...rest }) => rest);
    return { hits, dropped: scored.length - kept.length };
  }
}
