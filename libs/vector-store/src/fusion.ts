import type { HitSignals, SearchHit, SearchOptions, StoredDoc } from './vector-store.js';

/**
 * What a store that scores by itself (Qdrant) hands to the ranking module: its raw sparse (BM25-like) score
 * mapped to 0..1 and its cosine, fused by `options.fuse` like every other search.
 *
 * Qdrant's sparse score has no known upper bound (its idf is its own), so it is saturated: bm25 / (bm25 + k),
 * with k = 2 putting a single good term match near 0.5.
 */
export const SPARSE_SATURATION_K = 2;

/** The default fusion when a caller gives none: the plain mean of the signals present. */
export const meanOfSignals = (s: HitSignals): number =>
  s.dense === undefined ? s.lexical : (s.lexical + Math.max(0, s.dense)) / 2;

/** Maps a raw BM25 score to 0..1 with a saturating curve. */
export function saturate(bm25: number, k = SPARSE_SATURATION_K): number {
  if (!(bm25 > 0)) return 0;
  return bm25 / (bm25 + k);
}

/** One candidate's raw evidence from one side of a hybrid query. */
export interface Candidate {
  readonly doc: StoredDoc;
  /** Cosine similarity in -1..1, or undefined when unknown. */
  readonly cosine?: number;
  /** Raw sparse score (≥ 0), or undefined when the doc was not a sparse hit. */
  readonly bm25?: number;
}

/**
 * Merges candidates by doc id, fuses their signals with `options.fuse`, drops those under minScore and
 * sorts best first (ties by id). `total` is the count of survivors in the candidate pools.
 */
export function fuseCandidates(
  candidates: readonly Candidate[],
  options: SearchOptions,
): { hits: SearchHit[]; total: number } {
  const merged = new Map<string, { doc: StoredDoc; cosine?: number; bm25?: number }>();
  for (const c of candidates) {
    const seen = merged.get(c.doc.id);
    if (seen === undefined) merged.set(c.doc.id, { ...c });
    else {
      seen.cosine ??= c.cosine;
      if (c.bm25 !== undefined) seen.bm25 = Math.max(seen.bm25 ?? 0, c.bm25);
    }
  }
  const fuse = options.fuse ?? meanOfSignals;
  const scored = [...merged.values()].flatMap((m) => {
    const signals: HitSignals = { lexical: saturate(m.bm25 ?? 0), ...(options.vector ? { dense: m.cosine ?? 0 } : {}) };
    const score = fuse(signals);
    return score > 0 && score >= options.minScore ? [{ doc: m.doc, score, signals }] : [];
  });
  scored.sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? -1 : a.doc.id > b.doc.id ? 1 : 0));
  return { hits: scored.slice(0, options.limit), total: scored.length };
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
