/** Field values a document may carry beside its text and vector. */
export type FieldValue = string | number | boolean | string[] | null;
export type FieldType = 'string' | 'number' | 'boolean' | 'string[]';

/** The shape of one collection: which fields exist and which embedder made its vectors. */
export interface CollectionSpec {
  readonly name: string;
  readonly embedderId: string;
  readonly dimension: number;
  readonly fields: Readonly<Record<string, FieldType>>;
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
  readonly vector: Float32Array;
  readonly fields: Readonly<Record<string, FieldValue>>;
}

/** A document without its vector, as reads return it. */
export type StoredDoc = Omit<Doc, 'vector'>;

export type Condition =
  | { readonly field: string; readonly op: 'eq'; readonly value: string | number | boolean }
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

export interface SearchOptions {
  readonly vector: Float32Array;
  readonly text: string;
  readonly limit: number;
  /** Hits below this fused score (0..1) are dropped before counting `total`. */
  readonly minScore: number;
}

export interface SearchHit {
  readonly doc: StoredDoc;
  /** Fused dense + full-text relevance, normalised to 0..1 the same way on every store. */
  readonly score: number;
}

export interface Collection {
  readonly spec: CollectionSpec;
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
}

/**
 * The vector-store port. `open` creates the collection or checks it: a collection made by another
 * embedder id or dimension is refused with EMBEDDER_MISMATCH unless `reembed` is being used.
 */
export interface VectorStore {
  readonly kind: 'lancedb' | 'qdrant';
  open(spec: CollectionSpec): Promise<Collection>;
  /** The embedder id and dimension a collection was made with; undefined when it does not exist. */
  describe(name: string): Promise<{ embedderId: string; dimension: number } | undefined>;
  /** Drops and recreates a collection for a new embedder (the reindex path). */
  recreate(spec: CollectionSpec): Promise<Collection>;
  close(): Promise<void>;
}

export const VECTOR_STORE = Symbol('VECTOR_STORE');
