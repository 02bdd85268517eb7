import type { Embedder } from '#embeddings';
import type { Collection, Doc, DocScope } from './vector-store.js';

const WORDS = (
  'user prefers dark mode editor typescript python rust deploy server database index query memory agent skill ' +
  'meeting tuesday project deadline budget review design api latency cache redis nats queue worker retry error ' +
  'coffee travel berlin tokyo family birthday gift music guitar running marathon recipe pasta garden weather'
).split(' ');
const TAGS = ['work', 'home', 'health', 'travel', 'code', 'ideas', 'people', 'urgent'];

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

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vor', 'el', 'din', 'po', 'qua', 'zi', 'mar', 'ne', 'sol', 'ti'];
/** A 4000-word vocabulary: the real words first (most frequent), then made-up ones, as real text has a long tail. */
const VOCABULARY = [
  ...WORDS,
  ...Array.from({ length: 4000 - WORDS.length }, (_, i) =>
    [i % 16, (i >> 4) % 16, (i >> 8) % 16].map((k) => SYLLABLES[k]).join('')),
];

/** A generated sentence of 8-24 words, drawn with a Zipf-like skew (a few words are common, most are rare). */
export function generatedText(random: () => number): string {
  const n = 8 + Math.floor(random() * 17);
  return Array.from({ length: n }, () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]).join(' ');
}

export interface FillOptions {
  readonly count: number;
  readonly scope: DocScope;
  readonly seed?: number;
  readonly batchSize?: number;
}

/**
 * Fills a collection with `count` generated memory-like docs (text, importance, tags, source, date)
 * for benchmarks; the collection's spec should have those fields. Returns the ids written.
 */
export async function fillCollection(collection: Collection, embedder: Embedder, options: FillOptions): Promise<string[]> {
  const random = prng(options.seed ?? 42);
  const batchSize = options.batchSize ?? 5000;
  const ids: string[] = [];
  for (let start = 0; start < options.count; start += batchSize) {
    const n = Math.min(batchSize, options.count - start);
    const texts = Array.from({ length: n }, () => generatedText(random));
    const vectors = await embedder.embed(texts);
    const docs: Doc[] = texts.map((text, i) => ({
      ...options.scope,
      id: `bench-${start + i}`,
      text,
      vector: vectors[i]!,
      fields: benchFields(collection, random, start + i),
    }));
    await collection.upsert(docs);
    ids.push(...docs.map((d) => d.id));
  }
  return ids;
}

function benchFields(collection: Collection, random: () => number, i: number): Doc['fields'] {
  const all: Record<string, Doc['fields'][string]> = {
    importance: Math.round(random() * 100) / 100,
    tags: TAGS.filter(() => random() < 0.2),
    source: random() < 0.5 ? 'daily' : 'memory',
    date: new Date(Date.UTC(2026, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10),
  };
  return Object.fromEntries(Object.keys(collection.spec.fields).map((f) => [f, all[f] ?? null]));
}
