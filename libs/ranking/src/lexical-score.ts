/**
 * The lexical model every index of Alfred scores with: BM25F over two fields, the record's own text and its
 * context, with Robertson's usual constants (k1 = 1.2, b = 0.75).
 *
 * Context is what surrounds a record: for a conversation message, the messages around it (stored with it);
 * for plain memories, the memories written just before and after it in the same sitting (contextual
 * retrieval: a reply draws its meaning from what was said around it). Context words count at half the weight
 * of the record's own words, so a record's own match always outranks a match through its neighbours.
 *
 * The score is normalised by the query's upper bound, Σ idf(t) · (k1 + 1): an idf-weighted mean of how
 * strongly each query term matches, in [0, 1), which keeps the order of BM25 and means the same for every
 * query length.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Weight of a context word relative to a word of the record itself. */
export const CONTEXT_WEIGHT = 0.5;
/** Neighbours on each side that form a plain memory's context. */
export const NEIGHBOUR_WINDOW = 2;
/** Memories further apart in time than this are not each other's context (a common session inactivity timeout). */
export const SITTING_GAP_MS = 30 * 60_000;

/** Robertson–Spärck Jones idf with the +1 that keeps it positive (Lucene's form). */
export function idf(docs: number, docFreq: number): number {
  return Math.log(1 + (docs - docFreq + 0.5) / (docFreq + 0.5));
}

/** One term's saturated contribution for a (weighted) term frequency and the document's length ratio to the mean. */
export function termScore(tf: number, lengthRatio: number): number {
  return (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * lengthRatio));
}

/** The highest score any document could reach for a query with these term idfs. */
export function upperBound(idfs: readonly number[]): number {
  return idfs.reduce((s, x) => s + x, 0) * (BM25_K1 + 1);
}
