import stopword from 'stopword';
import { stemmer } from 'stemmer';

/**
 * The one text analyser of Alfred: every path that compares words (the lexical index, the hashing embedder,
 * Qdrant's sparse vectors, the distiller's and learner's similarity checks) goes through it, so a word means
 * the same everywhere.
 *
 *   "Caroline's kids went running!" → ["carolin", "kid", "went", "run"]
 *
 * Steps: lower-case and Unicode-normalise (NFKC), split into letter/digit runs, drop possessive "'s" and
 * contraction tails ("don't" → "do"), drop English stop words (the `stopword` package's list), then stem
 * with Porter's algorithm (the `stemmer` package). Numbers are kept as they are.
 */

/** The stop words every path drops (the `stopword` package's English list). */
export const STOP_WORDS: ReadonlySet<string> = new Set(stopword.eng);

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, NUL to DEL, is the point
const ASCII = /^[\x00-\x7f]*$/;
const APOSTROPHE = /['’]/;
/** Contraction tails that carry no content: "it's" → "it", "you're" → "you", "don't" → "do". */
const CONTRACTION = /['’](?:s|re|ve|ll|d|m|t)$/u;
const IRREGULAR_NEGATIONS: Readonly<Record<string, string>> = { "can't": 'can', "won't": 'will', "shan't": 'shall' };

const STEM_CACHE_MAX = 50_000;
const stems = new Map<string, string>();

/** Porter stem of one lower-case word, memoised (stemming dominates analysis time). */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = /^\p{N}+$/u.test(word) ? word : stemmer(word);
    if (stems.size >= STEM_CACHE_MAX) stems.clear();
    stems.set(word, s);
  }
  return s;
}

/** Lower-case words with possessives and contraction tails removed, before stop words and stemming. */
export function words(text: string): string[] {
  const matches = (ASCII.test(text) ? text : text.normalize('NFKC')).toLowerCase().match(WORD);
  if (matches === null) return [];
  const out: string[] = [];
  for (const raw of matches) {
    if (!APOSTROPHE.test(raw)) {
      out.push(raw);
      continue;
    }
    const m = raw.replace(/’/g, "'");
    const irregular = IRREGULAR_NEGATIONS[m];
    const word = irregular ?? (m.endsWith("n't") ? m.slice(0, -3) : m.replace(CONTRACTION, ''));
    for (const part of word.split("'")) if (part.length > 0) out.push(part);
  }
  return out;
}

export interface AnalyseOptions {
  /** Extra words to drop besides the stop words (e.g. words every record of a kind starts with). */
  readonly ignore?: ReadonlySet<string>;
}

/** The terms of a text, in order, with repeats: what is indexed and what a query looks for. */
export function analyse(text: string, options: AnalyseOptions = {}): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (STOP_WORDS.has(w) || options.ignore?.has(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/** Term frequencies of a text's terms. */
export function termFrequencies(text: string, options?: AnalyseOptions): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of analyse(text, options)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/** The distinct terms of a text. */
export function termSet(text: string, options?: AnalyseOptions): Set<string> {
  return new Set(analyse(text, options));
}

/** Words every insight or observation Alfred keeps is about ("User prefers …"): they tell none apart. */
export const SUBJECT_WORDS: ReadonlySet<string> = new Set(['user', 'users', 'agent', 'agents']);

/** The distinct terms of a text without its subject words: what the distiller and learner compare. */
export function contentWords(text: string): Set<string> {
  return termSet(text, { ignore: SUBJECT_WORDS });
}
