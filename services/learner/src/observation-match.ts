import { coverage, normalise } from './text-similarity.js';

/** A line counts as saying the observation when it holds at least this share of its content words. */
export const COVERAGE_THRESHOLD = 0.8;

/** Why the file already says the observation, or null when it does not. */
export function alreadySays(file: string, observation: string): string | null {
  const wanted = normalise(observation);
  if (wanted.length > 0 && normalise(file).includes(wanted)) return 'the file already contains this observation';
  for (const line of file.split('\n')) {
    const text = line.replace(/^[\s>*#-]+/, '').trim();
    if (!text) continue;
    const share = coverage(observation, text);
    if (share >= COVERAGE_THRESHOLD)
      return `the file already says this: "${text}" (${Math.round(share * 100)}% of its words)`;
  }
  return null;
}
