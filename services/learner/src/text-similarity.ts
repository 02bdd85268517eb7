const STOPWORDS = new Set(
  'a an the and or but of to in on at for with by from as is are was were be been being it its this that these those i you he she we they me my your our their user users agent should would will can could do does did very really'.split(
    ' ',
  ),
);

/** Lower case, punctuation to spaces, single spaces: what "the file already says it" compares. */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A crude stem: enough that "tests"/"test" and "writing"/"write" meet. */
function stem(word: string): string {
  return word.replace(/(ing|ed|es|s)$/, '').replace(/e$/, '');
}

/** The content words of a text, stemmed. */
export function contentWords(text: string): Set<string> {
  return new Set(
    normalise(text)
      .split(' ')
      .filter((w) => w.length > 1 && !STOPWORDS.has(w))
      .map(stem),
  );
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
