const WORDS = (
  'user prefers dark mode editor typescript python rust deploy server database index query memory agent skill ' +
  'meeting tuesday project deadline budget review design api latency cache redis nats queue worker retry error ' +
  'coffee travel berlin tokyo family birthday gift music guitar running marathon recipe pasta garden weather'
).split(' ');

/** A small deterministic PRNG (mulberry32) so generated corpora are identical across runs. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tu',
  'sa',
  'vor',
  'el',
  'din',
  'po',
  'qua',
  'zi',
  'mar',
  'ne',
  'sol',
  'ti',
];
/** A 4000-word vocabulary: the real words first (most frequent), then made-up ones, as real text has a long tail. */
const VOCABULARY = [
  ...WORDS,
  ...Array.from({ length: 4000 - WORDS.length }, (_, i) =>
    [i % 16, (i >> 4) % 16, (i >> 8) % 16].map((k) => SYLLABLES[k]).join(''),
  ),
];

/** A generated sentence of 8-24 words, drawn with a Zipf-like skew (a few words are common, most are rare). */
export function generatedText(random: () => number): string {
  const n = 8 + Math.floor(random() * 17);
  return Array.from({ length: n }, () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]).join(' ');
}
