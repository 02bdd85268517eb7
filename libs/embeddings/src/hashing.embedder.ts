import type { Embedder } from './embedder.js';
import { analyse } from '#text';
import { fmix } from './text-features.js';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const WORD_WEIGHT = 1;
const NGRAM_WEIGHT = 0.35;
const NGRAM = 3;
/** Seed separating character n-gram hashes from whole-word hashes. */
const NGRAM_SEED = 0x9e3779b9;

export interface HashingEmbedderOptions {
  readonly dimension?: number;
}

/**
 * Lexical fallback embedder: signed feature hashing of the analyser's terms (stop words dropped, stemmed)
 * plus character 3-grams (of "^term$"), L2-normalised. Similarity is word/spelling overlap only, no semantics.
 * v2: terms come from #text's analyser (v1 had its own tokenizer and no stop words).
 */
export class HashingEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly kind = 'lexical' as const;

  constructor(options: HashingEmbedderOptions = {}) {
    const dimension = options.dimension ?? 384;
    if (!Number.isInteger(dimension) || dimension < 8)
      throw new RangeError(`dimension must be an integer >= 8, got ${dimension}`);
    this.dimension = dimension;
    this.id = `hash-v2-${dimension}`;
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((t) => this.embedOne(t)));
  }

  /** Synchronous form for hot paths (one query on /search). */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimension);
    for (const token of analyse(text)) {
      this.addWord(vector, token);
      this.addNgrams(vector, token);
    }
    return normalise(vector);
  }

  private addWord(vector: Float32Array, token: string): void {
    let h = FNV_OFFSET;
    for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), FNV_PRIME);
    this.add(vector, fmix(h), WORD_WEIGHT);
  }

  /** Character n-grams of "^token$", hashed straight from char codes (no substring allocation). */
  private addNgrams(vector: Float32Array, token: string): void {
    const padded = token.length + 2;
    if (padded < NGRAM) return;
    for (let start = 0; start + NGRAM <= padded; start++) {
      let h = (FNV_OFFSET ^ NGRAM_SEED) >>> 0;
      for (let j = start; j < start + NGRAM; j++) {
        const code = j === 0 ? 0x5e : j === padded - 1 ? 0x24 : token.charCodeAt(j - 1);
        h = Math.imul(h ^ code, FNV_PRIME);
      }
      this.add(vector, fmix(h), NGRAM_WEIGHT);
    }
  }

  private add(vector: Float32Array, hash: number, weight: number): void {
    const bucket = (hash & 0x7fffffff) % this.dimension;
    vector[bucket] += hash & 0x80000000 ? -weight : weight;
  }
}

/** Scales to unit length in place; the zero vector (no tokens) stays zero. */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  if (sum === 0) return vector;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] *= inv;
  return vector;
}

/** Cosine of two vectors (dot product when both are unit length). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
