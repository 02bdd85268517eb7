import { contentWords } from '#text';

export { contentWords };

/** Lower case, punctuation to spaces, single spaces: what "the file already says it" compares. */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Share of the observation's content words found in the candidate (0..1). */
export function coverage(observation: string, candidate: string): number {
  const want = contentWords(observation);
  if (want.size === 0) return 0;
  const have = contentWords(candidate);
  let hits = 0;
  for (const w of want) if (have.has(w)) hits++;
  return hits / want.size;
}
