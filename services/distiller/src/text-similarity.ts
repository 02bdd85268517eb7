import { createHash } from 'node:crypto';

const STOPWORDS = new Set(
  'a an the and or but of to in on at for with by from as is are was were be been being it its this that these those i you he she we they me my your our their user agent should would will can could do does did very really has have had'.split(' '),
);

/** Lower case, punctuation to spaces, single spaces. */
export function normalise(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

const stem = (w: string) => w.replace(/(ing|ed|es|s)$/, '').replace(/e$/, '');

/** Stemmed content words: the embedder-free lexical view of a text. */
export function contentWords(text: string): Set<string> {
  return new Set(normalise(text).split(' ').filter((w) => w.length > 1 && !STOPWORDS.has(w)).map(stem));
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Share of `a`'s words found in `b`. */
export function coverage(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / a.size;
}

/** The stable id of an insight: its normalised text, hashed. */
export function insightId(text: string): string {
  return createHash('sha256').update(normalise(text)).digest('hex').slice(0, 12);
}
