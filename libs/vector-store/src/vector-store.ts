import type { JournaledWrites } from './collection-write.js';

/** Field values a document may carry beside its text and vector. */
export type FieldValue = string | number | boolean | string[] | null;
export type FieldType = 'string' | 'number' | 'boolean' | 'string[]';

/** The shape of one collection: which fields exist and which embedder made its vectors. */
export interface CollectionSpec {
  readonly name: string;
  readonly embedderId: string;
  readonly dimension: number;
  readonly fields: Readonly<Record<string, FieldType>>;
  /**
   * A field holding each document's write time (ISO string or ms): documents without stored context are
   * then searched with their neighbours in that order as context (see #ranking's lexical-score). Not stored.
   */
  readonly orderField?: string;
}

/** Every document belongs to a tenant and an agent; every query filters on both. */
export interface DocScope {
  readonly tenant: string;
  readonly agent: string;
}

export interface Doc extends DocScope {
  readonly id: string;
  /** The text indexed for full-text (BM25) search; the vector's source. */
  readonly text: string;
  /**
   * More indexed text that is not the document's own (e.g. a conversation message's neighbours and date):
   * searched at a lower weight, never embedded, returned only by reads for reindexing.
   */
  readonly context?: string;
  readonly vector: Float32Array;
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/** A document without its vector, as reads return it. */
export type StoredDoc = Omit<Doc, 'vector'>;

export type Condition =
  | { readonly field: string; readonly op: 'eq'; readonly value: string | number | boolean }
  /** Not equal to the value, documents without one (null) included. */
  | { readonly field: string; readonly op: 'ne'; readonly value: string | number | boolean }
  | { readonly field: string; readonly op: 'contains'; readonly value: string }
  | { readonly field: string; readonly op: 'gte' | 'lte'; readonly value: number | string };

export interface Filter extends DocScope {
  readonly where?: readonly Condition[];
}

export interface ListOptions {
  readonly sortBy: string;
  readonly order: 'asc' | 'desc';
  readonly limit: number;
  readonly offset: number;
}

/** The evidence a store gathers about one hit: lexical match (0..1) and, when a vector was given, cosine. */
export interface HitSignals {
  readonly lexical: number;
  readonly dense?: number;
}

export interface SearchOptions {
  /** The query vector; omitted when dense similarity does not count (a lexical embedder), which skips it. */
  readonly vector?: Float32Array;
  readonly text: string;
  readonly limit: number;
  /** Hits below this relevance (0..1) are dropped before counting `total`. */
  readonly minScore: number;
  /** How signals fuse into relevance (the ranking module's); without it, the mean of the signals present. */
  readonly fuse?: (signals: HitSignals) => number;
}

export interface SearchHit {
  readonly doc: StoredDoc;
  /** Relevance in 0..1 (fused by `fuse`), the same way on every store. */
  readonly score: number;
  readonly signals: HitSignals;
}

export interface Collection {
  readonly spec: CollectionSpec;
  /**
   * Writes a caller's write-ahead log makes durable (the embedded store: one log fsync instead of a table commit
   * per write); absent where every write must reach the store itself (Qdrant).
   */
  readonly journal?: JournaledWrites;
  upsert(docs: readonly Doc[]): Promise<void>;
  /**
   * Stores documents whose ids are new in their scope (e.g. fresh UUIDs), skipping the lookup an upsert
   * needs; inserting an id that already exists in the scope is a caller error with undefined results.
   */
  insert(docs: readonly Doc[]): Promise<void>;
  get(scope: DocScope, ids: readonly string[]): Promise<StoredDoc[]>;
  /** Deletes what exists in scope; returns the ids that were deleted. */
  delete(scope: DocScope, ids: readonly string[]): Promise<string[]>;
  list(filter: Filter, options: ListOptions): Promise<{ docs: StoredDoc[]; total: number }>;
  search(filter: Filter, options: SearchOptions): Promise<{ hits: SearchHit[]; total: number }>;
  /** Every document of every scope, for reindexing; in pages. */
  scanAll(pageSize: number): AsyncIterable<StoredDoc[]>;
  /**
   * Sets some fields of existing documents, keeping the rest (a migration filling new fields); missing ids are skipped.
   */
  setFields(updates: readonly FieldUpdate[]): Promise<void>;
}

/** New values for some fields of one document. */
export interface FieldUpdate extends DocScope {
  readonly id: string;
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/**
 * The vector-store port. `open` creates the collection or checks it: a collection made by another
 * embedder id or dimension is refused with EMBEDDER_MISMATCH unless `reembed` is being used. A spec that adds
 * fields to a stored collection adds them (null in every existing document); any other field change is refused.
 */
export interface VectorStore {
  readonly kind: 'lancedb' | 'qdrant';
  open(spec: CollectionSpec): Promise<Collection>;
  /** The embedder id and dimension a collection was made with; undefined when it does not exist. */
  describe(name: string): Promise<{ embedderId: string; dimension: number } | undefined>;
  /** Drops and recreates a collection for a new embedder (the reindex path). */
  recreate(spec: CollectionSpec): Promise<Collection>;
  /** Deletes a collection and its documents (a migration retiring one); nothing when it does not exist. */
  drop(name: string): Promise<void>;
  close(): Promise<void>;
}

export const VECTOR_STORE = Symbol('VECTOR_STORE');
