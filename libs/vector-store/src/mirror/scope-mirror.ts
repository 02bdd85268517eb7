import type { Condition, Doc, DocScope, SearchHit, SearchOptions, StoredDoc } from '../vector-store.js';
import { meanOfSignals } from '../fusion.js';
import { DenseIndex } from './dense-index.js';
import { docPredicate } from './doc-filter.js';
import { LexicalIndex } from './lexical-index.js';

const MIN_POOL = 50;
/**
 * Estimated bytes of one document in memory beside its strings (its object and fields, its lexical records and
 * postings), measured with heap snapshots of realistic memories; strings count two bytes a character (V8 keeps
 * non-Latin-1 text at two).
 */
const DOC_OVERHEAD = 1_100;
/** Estimated bytes of one term of a scope's vocabulary (its string, map entry and per-term arrays). */
const TERM_BYTES = 55;

/**
 * One (tenant, agent) scope's documents in memory with their lexical and dense indexes: what search reads,
 * so its cost and its statistics (idf, mean length) depend on this scope's documents alone.
 */
export class ScopeMirror {
  private readonly slots = new Map<string, number>();
  private readonly docs: Array<StoredDoc | undefined> = [];
  private readonly free: number[] = [];
  private readonly lexical = new LexicalIndex();
  /** Built on the first search with a vector (semantic embedders only), then kept current. */
  dense: DenseIndex | undefined;
  private docBytes = 0;

  constructor(private readonly orderOf: (doc: StoredDoc) => number | undefined) {}

  get size(): number {
    return this.slots.size;
  }

  /** Estimated bytes this scope holds in memory (for the resident budget). */
  get bytes(): number {
    return this.docBytes + TERM_BYTES * this.lexical.vocabulary + (this.dense?.bytes ?? 0);
  }

  get(id: string): StoredDoc | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.docs[slot];
  }

  ids(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Adds or replaces a document (its vector too, when the dense index exists and one is given). */
  upsert(doc: StoredDoc, vector?: Float32Array): void {
    let slot = this.slots.get(doc.id);
    if (slot !== undefined) this.lexical.remove(slot);
    else {
      slot = this.free.pop() ?? this.docs.length;
      this.slots.set(doc.id, slot);
    }
    const stored = storedOf(doc);
    const before = this.docs[slot];
    if (before) this.docBytes -= bytesOf(before);
    this.docs[slot] = stored;
    this.docBytes += bytesOf(stored);
    const order = this.orderOf(stored);
    this.lexical.add(slot, {
      text: stored.text,
      ...(stored.context ? { context: stored.context } : {}),
      ...(order !== undefined ? { order } : {}),
    });
    if (this.dense && vector) this.dense.add(slot, vector);
  }

  delete(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.lexical.remove(slot);
    this.dense?.remove(slot);
    this.docBytes -= bytesOf(this.docs[slot]!);
    this.docs[slot] = undefined;
    this.slots.delete(id);
    this.free.push(slot);
    return true;
  }

  /** Loads every vector of the scope into a new dense index. */
  buildDense(dimension: number, vectors: Iterable<{ id: string; vector: Float32Array }>): void {
    const dense = new DenseIndex(dimension);
    for (const { id, vector } of vectors) {
      const slot = this.slots.get(id);
      if (slot !== undefined) dense.add(slot, vector);
    }
    this.dense = dense;
  }

  /**
   * Lexical candidates (and dense ones when a vector is given), fused by `options.fuse`; hits carry both
   * signals. `total` counts every document at or above minScore (exact without a vector; within the
   * candidate pools with one).
   */
  search(where: readonly Condition[] | undefined, options: SearchOptions): { hits: SearchHit[]; total: number } {
    const test = docPredicate(where);
    const accept = test ? (slot: number) => test(this.docs[slot]!) : undefined;
    // The caller asks for its candidate pool (#ranking's candidatePool); at least MIN_POOL come from each side
    // so that a hybrid total means something for small pages.
    const pool = Math.max(options.limit, MIN_POOL);
    const useDense = options.vector !== undefined && this.dense !== undefined && options.vector.some((x) => x !== 0);
    const lexical = this.lexical.search({
      text: options.text,
      pool,
      minScore: useDense ? 0 : options.minScore,
      ...(accept ? { accept } : {}),
    });
    if (!useDense) {
      const hits = lexical.top
        .slice(0, options.limit)
        .map(({ slot, score }) => ({ doc: this.docs[slot]!, score, signals: { lexical: score } }));
      return { hits, total: lexical.total };
    }
    const vector = options.vector!;
    const slots = new Set(lexical.top.map((t) => t.slot));
    for (const { slot } of this.dense!.nearest(vector, pool, accept)) slots.add(slot);
    const fuse = options.fuse ?? meanOfSignals;
    const scored = [...slots].map((slot) => {
      const signals = { lexical: lexical.scoreOf(slot), dense: this.dense!.cosine(slot, normalisedQuery(vector)) ?? 0 };
      return { slot, signals, score: fuse(signals) };
    });
    const kept = scored.filter((s) => s.score > 0 && s.score >= options.minScore);
    kept.sort((a, b) => b.score - a.score || a.slot - b.slot);
    return {
      hits: kept.slice(0, options.limit).map((s) => ({ doc: this.docs[s.slot]!, score: s.score, signals: s.signals })),
      total: kept.length,
    };
  }
}

function bytesOf(doc: StoredDoc): number {
  let chars = doc.id.length + doc.text.length + (doc.context?.length ?? 0);
  for (const v of Object.values(doc.fields)) {
    if (typeof v === 'string') chars += v.length;
    else if (Array.isArray(v)) for (const s of v) chars += s.length + 16;
  }
  return DOC_OVERHEAD + 2 * chars;
}

function storedOf(doc: StoredDoc | Doc): StoredDoc {
  const { vector: _vector, ...stored } = doc as Doc;
  return stored;
}

let lastQuery: { vector: Float32Array; unit: Float32Array } | undefined;
/** The query vector at unit length (cached for the one query being scored). */
function normalisedQuery(vector: Float32Array): Float32Array {
  if (lastQuery?.vector === vector) return lastQuery.unit;
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const inv = sum > 0 ? 1 / Math.sqrt(sum) : 0;
  const unit = vector.map((x) => x * inv);
  lastQuery = { vector, unit };
  return unit;
}

export const scopeKey = (scope: DocScope) => JSON.stringify([scope.tenant, scope.agent]);
