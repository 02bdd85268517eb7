import { createHash } from 'node:crypto';
import { contentWords } from '#text';

export { contentWords };

/** Lower case, punctuation to spaces, single spaces. */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
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
