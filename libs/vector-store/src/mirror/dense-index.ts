import { Index, MetricKind, ScalarKind } from 'usearch';
import { grown } from './postings.js';

/** Below this many vectors an exact scan is as fast as a graph walk (measured: bench/memory.bench.ts) and exact. */
export const HNSW_MIN_DOCS = 5_000;

/**
 * The vectors of one scope, for semantic embedders only (a lexical embedder's cosine gets no weight, so its
 * vectors are never loaded). Exact cosine scan for small scopes; an HNSW graph (usearch) past HNSW_MIN_DOCS.
 */
export class DenseIndex {
  private vectors: Float32Array;
  private alive = new Uint8Array(16);
  private count = 0;
  private graph: Index | undefined;

  constructor(private readonly dimension: number) {
    this.vectors = new Float32Array(16 * dimension);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes of its vectors (and graph, roughly as much again once built). */
  get bytes(): number {
    return this.vectors.byteLength * (this.graph ? 2 : 1) + this.alive.byteLength;
  }

  add(slot: number, vector: Float32Array): void {
    if (this.alive[slot]) this.remove(slot);
    this.ensure(slot + 1);
    const unit = normalised(vector);
    this.vectors.set(unit, slot * this.dimension);
    this.alive[slot] = 1;
    this.count++;
    if (this.graph) this.graph.add(BigInt(slot), unit);
    else if (this.count >= HNSW_MIN_DOCS) this.buildGraph();
  }

  remove(slot: number): void {
    if (!this.alive[slot]) return;
    this.alive[slot] = 0;
    this.count--;
    this.graph?.remove(BigInt(slot));
  }

  /** Cosine of the query and one stored vector (undefined when the slot has none). */
  cosine(slot: number, query: Float32Array): number | undefined {
    if (!this.alive[slot]) return undefined;
    let dot = 0;
    const base = slot * this.dimension;
    for (let i = 0; i < this.dimension; i++) dot += this.vectors[base + i]! * query[i]!;
    return dot;
  }

  /** The `k` nearest accepted slots by cosine, best first. */
  nearest(
    vector: Float32Array,
    k: number,
    accept?: (slot: number) => boolean,
  ): Array<{ slot: number; cosine: number }> {
    const query = normalised(vector);
    if (this.graph) {
      const found = this.fromGraph(query, k, accept);
      if (found.length >= Math.min(k, this.count) || !accept) return found;
    }
    const out: Array<{ slot: number; cosine: number }> = [];
    for (let slot = 0; slot < this.alive.length; slot++) {
      if (!this.alive[slot] || (accept && !accept(slot))) continue;
      out.push({ slot, cosine: this.cosine(slot, query)! });
    }
    return out.sort((a, b) => b.cosine - a.cosine || a.slot - b.slot).slice(0, k);
  }

  private fromGraph(
    query: Float32Array,
    k: number,
    accept?: (slot: number) => boolean,
  ): Array<{ slot: number; cosine: number }> {
    const want = Math.min(this.count, accept ? k * 4 : k);
    const { keys, distances } = this.graph!.search(query, want, 0);
    const out: Array<{ slot: number; cosine: number }> = [];
    for (let i = 0; i < keys.length && out.length < k; i++) {
      const slot = Number(keys[i]);
      if (this.alive[slot] && (!accept || accept(slot))) out.push({ slot, cosine: 1 - distances[i]! });
    }
    return out;
  }

  private buildGraph(): void {
    this.graph = new Index(this.dimension, MetricKind.Cos, ScalarKind.F32, 16);
    for (let slot = 0; slot < this.alive.length; slot++) {
      if (this.alive[slot])
        this.graph.add(BigInt(slot), this.vectors.subarray(slot * this.dimension, (slot + 1) * this.dimension));
    }
  }

  private ensure(n: number): void {
    if (n <= this.alive.length) return;
    this.alive = grown(this.alive, n);
    const vectors = new Float32Array(this.alive.length * this.dimension);
    vectors.set(this.vectors);
    this.vectors = vectors;
  }
}

function normalised(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  if (sum === 0) return v;
  const out = new Float32Array(v.length);
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv;
  return out;
}
