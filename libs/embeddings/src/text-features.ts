import { analyse } from '#text';

/** Hashing of analysed terms, shared by the hashing embedder and sparse (BM25-style) term vectors. */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a over UTF-16 code units, with a seed to give independent hash families. */
export function fnv1a(text: string, seed = 0): number {
  let h = (FNV_OFFSET ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return fmix(h);
}

/** murmur3's finaliser: spreads FNV's weak low bits so `% dimension` and the sign bit are independent. */
export function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Term frequencies of a text's tokens, keyed by a 31-bit term hash: the sparse representation
 * used for BM25-style sparse vectors (Qdrant) so both stores see the same terms.
 */
export function termHashes(text: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const token of analyse(text)) {
    const key = fnv1a(token) & 0x7fffffff;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
