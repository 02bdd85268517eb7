import type { CollectionWrite } from '../collection-write.js';
import type { CollectionSpec, Doc, DocScope, Filter, SearchHit, SearchOptions, StoredDoc } from '../vector-store.js';
import { scopeKey, ScopeMirror } from './scope-mirror.js';

/**
 * A collection's documents in memory, one ScopeMirror per (tenant, agent): the serving side of the embedded
 * store. It is filled from the durable table at open and then changed only after the table's writes
 * succeed, by the collection that makes them, so it never holds what the table does not.
 */
export class CollectionMirror {
  private readonly scopes = new Map<string, ScopeMirror>();

  constructor(private readonly spec: CollectionSpec) {}

  /** Adds a page of stored documents, each scope's in write order (see CollectionSpec.orderField). */
  load(docs: readonly StoredDoc[]): void {
    const ordered = this.spec.orderField ? [...docs].sort((a, b) => (this.orderOf(a) ?? 0) - (this.orderOf(b) ?? 0)) : docs;
    for (const doc of ordered) this.scope(doc, true)!.upsert(doc);
  }

  apply(write: CollectionWrite): void {
    if (write.kind === 'delete') this.delete(write.scope, write.ids);
    else this.upsert(write.docs);
  }

  /** Fields a document leaves out read as null, as they do from the table. */
  upsert(docs: readonly Doc[]): void {
    for (const doc of docs) this.scope(doc, true)!.upsert(this.complete(doc), doc.vector);
  }

  private complete<D extends StoredDoc>(doc: D): D {
    const fields = Object.keys(this.spec.fields);
    if (fields.every((f) => f in doc.fields)) return doc;
    return { ...doc, fields: { ...Object.fromEntries(fields.map((f) => [f, null])), ...doc.fields } };
  }

  /** A document's new text or fields, its vector unchanged. */
  restate(doc: StoredDoc): void {
    this.scope(doc, true)!.upsert(doc);
  }

  delete(scope: DocScope, ids: readonly string[]): void {
    const mirror = this.scope(scope, false);
    if (!mirror) return;
    for (const id of ids) mirror.delete(id);
    if (mirror.size === 0 && !mirror.dense) this.scopes.delete(scopeKey(scope));
  }

  get(scope: DocScope, ids: readonly string[]): StoredDoc[] {
    const mirror = this.scope(scope, false);
    if (!mirror) return [];
    return [...new Set(ids)].flatMap((id) => mirror.get(id) ?? []);
  }

  /** Whether the scope's dense index must be loaded before a search with a vector. */
  needsDense(scope: DocScope): boolean {
    const mirror = this.scope(scope, false);
    return mirror !== undefined && mirror.dense === undefined;
  }

  buildDense(scope: DocScope, vectors: Iterable<{ id: string; vector: Float32Array }>): void {
    this.scope(scope, false)?.buildDense(this.spec.dimension, vectors);
  }

  search(filter: Filter, options: SearchOptions): { hits: SearchHit[]; total: number } {
    const mirror = this.scope(filter, false);
    if (!mirror) return { hits: [], total: 0 };
    return mirror.search(filter.where, options);
  }

  private scope(scope: DocScope, create: boolean): ScopeMirror | undefined {
    const key = scopeKey(scope);
    let mirror = this.scopes.get(key);
    if (!mirror && create) this.scopes.set(key, (mirror = new ScopeMirror((d) => this.orderOf(d))));
    return mirror;
  }

  private orderOf(doc: StoredDoc): number | undefined {
    const field = this.spec.orderField;
    if (field === undefined) return undefined;
    const v = doc.fields[field];
    const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN;
    return Number.isFinite(ms) ? ms : undefined;
  }
}
