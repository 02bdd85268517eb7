import { randomUUID } from 'node:crypto';
import { Metrics } from '#metrics';
import type { CollectionWrite } from '../collection-write.js';
import type { CollectionSpec, DocScope, StoredDoc } from '../vector-store.js';
import { residentBudget, type ResidentBudget } from './resident-budget.js';
import { scopeKey, ScopeMirror } from './scope-mirror.js';

/** A document's vector, as a scope's dense index is built from. */
export interface DocVector {
  readonly id: string;
  readonly vector: Float32Array;
}

/**
 * Reads one scope from the durable store and, in the same step (before anything else can change it), hands the
 * documents and the scope's writes the store does not hold yet to `install`; with `dense`, the documents' vectors too
 * (read in the same query: a cold search with a vector reads the scope once).
 */
export type ScopeLoader = (
  scope: DocScope,
  install: (
    docs: readonly StoredDoc[],
    pending: readonly CollectionWrite[],
    vectors?: readonly DocVector[],
  ) => ScopeMirror,
  dense: boolean,
) => Promise<ScopeMirror>;

/**
 * A collection's documents in memory, one ScopeMirror per (tenant, agent): the serving side of the embedded store.
 * A scope is loaded the first time it is searched, and kept current by every write that reaches the collection after;
 * the process's ResidentBudget drops the least recently used scopes, which load again when next used. Concurrent
 * first uses share one load; a scope dropped while a search reads it stays whole for that search.
 */
export class CollectionMirror {
  private readonly scopes = new Map<string, ScopeMirror>();
  private readonly loading = new Map<string, Promise<ScopeMirror>>();
  /** This collection's identity in the shared budget. */
  private readonly id = randomUUID();

  constructor(
    private readonly spec: CollectionSpec,
    private readonly loader: ScopeLoader,
    private readonly budget: ResidentBudget = residentBudget,
  ) {}

  /**
   * The scope's index, loading it first if it is not in memory; with `dense`, a load builds its dense index too (a
   * load already under way without it is shared, and its dense index is built after by `buildDense`).
   */
  async resident(scope: DocScope, dense = false): Promise<ScopeMirror> {
    const key = scopeKey(scope);
    const mirror = this.scopes.get(key);
    if (mirror) {
      this.budget.touch(this.budgetKey(key));
      Metrics.indexHits.inc({ collection: this.spec.name });
      return mirror;
    }
    let loading = this.loading.get(key);
    if (!loading) {
      loading = this.loader(
        scope,
        (docs, pending, vectors) => this.install(key, docs, pending, vectors),
        dense,
      ).finally(() => this.loading.delete(key));
      this.loading.set(key, loading);
    }
    return loading;
  }

  /** The scope's index when it is in memory now (no load). */
  residentNow(scope: DocScope): ScopeMirror | undefined {
    return this.scopes.get(scopeKey(scope));
  }

  /**
   * Applies a write to the scopes in memory; the others see it when they load (from the table or the pending writes).
   */
  apply(write: CollectionWrite): void {
    if (write.kind === 'delete') {
      const mirror = this.scopes.get(scopeKey(write.scope));
      if (!mirror) return;
      for (const id of write.ids) mirror.delete(id);
      this.resized(scopeKey(write.scope), mirror);
      return;
    }
    for (const doc of write.docs) this.withScope(doc, (m) => m.upsert(this.complete(doc), doc.vector));
  }

  /** A document's new text or fields, its vector unchanged (when its scope is in memory). */
  restate(doc: StoredDoc): void {
    this.withScope(doc, (m) => m.upsert(this.complete(doc)));
  }

  /** Whether the scope's dense index must be loaded before a search with a vector. */
  needsDense(scope: DocScope): boolean {
    const mirror = this.scopes.get(scopeKey(scope));
    return mirror !== undefined && mirror.dense === undefined;
  }

  buildDense(scope: DocScope, vectors: Iterable<DocVector>): void {
    this.withScope(scope, (m) => m.buildDense(this.spec.dimension, vectors));
  }

  /** Fields a document leaves out read as null, as they do from the table. */
  complete<D extends StoredDoc>(doc: D): D {
    const fields = Object.keys(this.spec.fields);
    if (fields.every((f) => f in doc.fields)) return doc;
    return { ...doc, fields: { ...Object.fromEntries(fields.map((f) => [f, null])), ...doc.fields } };
  }

  private install(
    key: string,
    docs: readonly StoredDoc[],
    pending: readonly CollectionWrite[],
    vectors?: readonly DocVector[],
  ): ScopeMirror {
    const mirror = new ScopeMirror((d) => this.orderOf(d));
    const ordered = this.spec.orderField
      ? [...docs].sort((a, b) => (this.orderOf(a) ?? 0) - (this.orderOf(b) ?? 0))
      : docs;
    for (const doc of ordered) mirror.upsert(doc);
    for (const w of pending) {
      if (w.kind === 'delete') for (const id of w.ids) mirror.delete(id);
      else for (const doc of w.docs) mirror.upsert(this.complete(doc));
    }
    if (vectors) mirror.buildDense(this.spec.dimension, [...vectors, ...pendingVectors(pending)]);
    this.scopes.set(key, mirror);
    this.budget.add(this.budgetKey(key), this.spec.name, mirror.bytes, () => this.scopes.delete(key));
    return mirror;
  }

  private withScope(scope: DocScope, change: (m: ScopeMirror) => void): void {
    const key = scopeKey(scope);
    const mirror = this.scopes.get(key);
    if (!mirror) return;
    change(mirror);
    this.resized(key, mirror);
  }

  private resized(key: string, mirror: ScopeMirror): void {
    this.budget.resize(this.budgetKey(key), mirror.bytes);
  }

  private budgetKey(key: string): string {
    return `${this.id}\u0000${key}`;
  }

  /** Drops every scope of this collection from memory (the collection closes). */
  clear(): void {
    for (const key of this.scopes.keys()) this.budget.remove(this.budgetKey(key));
    this.scopes.clear();
  }

  private orderOf(doc: StoredDoc): number | undefined {
    const field = this.spec.orderField;
    if (field === undefined) return undefined;
    const v = doc.fields[field];
    const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN;
    return Number.isFinite(ms) ? ms : undefined;
  }
}

/** The vectors of the writes a store does not hold yet, in order (a later one of an id replaces the earlier). */
export function pendingVectors(pending: readonly CollectionWrite[]): DocVector[] {
  return pending.flatMap((w) => (w.kind === 'delete' ? [] : w.docs.map((d) => ({ id: d.id, vector: d.vector }))));
}
