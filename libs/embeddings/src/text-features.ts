/** Text normalisation shared by the hashing embedder and sparse (BM25-style) term vectors. */

const WORD = /[\p{L}\p{N}]+/gu;
const SUFFIXES = ['ingly', 'edly', 'ing', 'ies', 'ied', 'ed', 'es', 's'] as const;

/** A deliberately light stemmer: folds common English inflections so "running"/"runs" meet "run". */
export function stem(token: string): string {
  if (token.length <= 4) return token;
  for (const suffix of SUFFIXES) {
    if (token.length - suffix.length >= 3 && token.endsWith(suffix)) {
      const base = token.slice(0, -suffix.length);
      if (suffix === 'ies' || suffix === 'ied') return `${base}y`;
      if (suffix === 's' && base.endsWith('s')) return token;
      return base.length > 3 && base.at(-1) === base.at(-2) ? base.slice(0, -1) : base;
    }
  }
  return token;
}

/** Lowercased, unicode-aware word tokens, lightly stemmed. */
export function tokenize(text: string): string[] {
  const words = text.toLowerCase().match(WORD);
  if (words === null) return [];
  const out = new Array<string>(words.length);
  for (let i = 0; i < words.length; i++) out[i] = stem(words[i]);
  return out;
}

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
  for (const token of tokenize(text)) {
    const key = fnv1a(token) & 0x7fffffff;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
