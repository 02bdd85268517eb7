/**
 * Hybrid score fusion shared by every store, so `minScore` means the same everywhere.
 *
 *   score = w · dense + (1 − w) · lexical
 *   dense   = max(0, cosine(query, doc))                 (already 0..1 for cosine ≥ 0)
 *   lexical = bm25 / (bm25 + k)                          (saturation: 0 for no match, → 1 for strong matches)
 *
 * Linear fusion of bounded scores is used rather than reciprocal-rank fusion because RRF scores depend on
 * the candidate pool and list lengths, not on relevance, so a fixed min_score would mean nothing.
 * k = 2 puts a single good term match (BM25 ≈ 2) at 0.5; w = 0.7 keeps the embedder in charge and lets
 * exact words lift a hit. A candidate seen only by full-text search gets its exact cosine computed
 * client-side; one seen only by vector search counts lexical 0 (it was not among the best text matches).
 */
export interface FusionWeights {
  readonly denseWeight: number;
  readonly bm25K: number;
}

export const DEFAULT_FUSION: FusionWeights = { denseWeight: 0.7, bm25K: 2 };

/** One candidate's raw evidence from the two sides. */
export interface Candidate<T> {
  readonly item: T;
  /** Cosine similarity in -1..1, or undefined when unknown. */
  readonly cosine?: number;
  /** Raw BM25 score (≥ 0), or undefined when the doc was not a full-text hit. */
  readonly bm25?: number;
}

/** Maps a raw BM25 score to 0..1 with a saturating curve. */
export function saturate(bm25: number, k: number): number {
  if (!(bm25 > 0)) return 0;
  return bm25 / (bm25 + k);
}

/** The fused 0..1 score of one candidate. */
export function fuseScore(cosine: number | undefined, bm25: number | undefined, weights: FusionWeights = DEFAULT_FUSION): number {
  const dense = cosine === undefined || !(cosine > 0) ? 0 : Math.min(1, cosine);
  const lexical = bm25 === undefined ? 0 : saturate(bm25, weights.bm25K);
  const w = weights.denseWeight;
  return Math.min(1, Math.max(0, w * dense + (1 - w) * lexical));
}

/**
 * Merges candidates by key (the same doc may come from both sides), scores them, drops those below
 * minScore and sorts best first (ties by key for a stable order). Returns every survivor; the caller
 * takes the page and reports the survivors' count as `total`.
 */
export function fuse<T>(
  candidates: readonly Candidate<T>[],
  keyOf: (item: T) => string,
  minScore: number,
  weights: FusionWeights = DEFAULT_FUSION,
): { item: T; score: number }[] {
  const merged = new Map<string, { item: T; cosine?: number; bm25?: number }>();
  for (const c of candidates) {
    const key = keyOf(c.item);
    const seen = merged.get(key);
    if (seen === undefined) merged.set(key, { item: c.item, cosine: c.cosine, bm25: c.bm25 });
    else {
      seen.cosine ??= c.cosine;
      if (c.bm25 !== undefined) seen.bm25 = Math.max(seen.bm25 ?? 0, c.bm25);
    }
  }
  const scored: { item: T; score: number; key: string }[] = [];
  for (const [key, m] of merged) {
    const score = fuseScore(m.cosine, m.bm25, weights);
    if (score >= minScore && score > 0) scored.push({ item: m.item, score, key });
  }
  scored.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return scored.map(({ item, score }) => ({ item, score }));
}

/** Cosine similarity of a query and a stored vector; undefined when either is all zeros (no direction to compare). */
export function cosineOf(a: ArrayLike<number>, b: ArrayLike<number>): number | undefined {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? undefined : dot / Math.sqrt(na * nb);
}
