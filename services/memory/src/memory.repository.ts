import type { Memory, MemoryListQuery, MemorySource, Scope } from '#contracts';
import type { StoreWrite } from '#durable';
import type {
  Collection,
  CollectionSpec,
  CollectionWrite,
  Condition,
  Doc,
  HitSignals,
  SearchOptions,
  StoredDoc,
} from '#vector-store';
import {
  PROVENANCE_FIELDS,
  provenanceConditions,
  provenanceFields,
  provenanceView,
  writtenByOf,
  type ProvenanceQuery,
  type WrittenBy,
} from './provenance/provenance-fields.js';

/** A memory as stored: the API fields plus what the store keeps about it. */
export interface MemoryRecord extends Omit<Memory, 'provenance' | 'trust'> {
  readonly version: number;
  /** Indexed context (a conversation message's neighbours and date); searched, never shown. */
  readonly context?: string;
  /** Who wrote it and its injection mark; absent on memories written before provenance was kept. */
  readonly written?: WrittenBy;
}

export const MEMORY_COLLECTION = 'memories';

export function memoryCollectionSpec(embedderId: string, dimension: number): CollectionSpec {
  return {
    name: MEMORY_COLLECTION,
    embedderId,
    dimension,
    fields: {
      importance: 'number',
      tags: 'string[]',
      source: 'string',
      date: 'string',
      timestamp: 'string',
      updated_at: 'string',
      version: 'number',
      ...PROVENANCE_FIELDS,
    },
    // Memories without stored context are searched with the ones written around them as context.
    orderField: 'timestamp',
  };
}

/** Maps memories to documents of the vector store and back; no logic of its own. */
export class MemoryRepository {
  constructor(readonly collection: Collection) {}

  /**
   * The store write that saves records: `insert` for fresh ids (new UUIDs: no row to look up), `upsert` otherwise.
   * Journaled where the store offers it (one outbox line with the change's events), else a call of its own.
   */
  saveWrite(
    scope: Scope,
    records: readonly MemoryRecord[],
    vectors: readonly Float32Array[],
    kind: 'insert' | 'upsert',
  ): StoreWrite {
    return storeWrite(this.collection, { kind, docs: records.map((r, i) => toDoc(scope, r, vectors[i]!)) });
  }

  deleteWrite(scope: Scope, ids: readonly string[]): StoreWrite {
    return storeWrite(this.collection, { kind: 'delete', scope, ids });
  }

  async save(scope: Scope, records: readonly MemoryRecord[], vectors: readonly Float32Array[]): Promise<void> {
    await this.collection.upsert(records.map((r, i) => toDoc(scope, r, vectors[i]!)));
  }

  async get(scope: Scope, id: string): Promise<MemoryRecord | undefined> {
    const [doc] = await this.collection.get(scope, [id]);
    return doc ? fromDoc(doc) : undefined;
  }

  delete(scope: Scope, ids: readonly string[]): Promise<string[]> {
    return this.collection.delete(scope, ids);
  }

  async list(scope: Scope, query: MemoryListQuery): Promise<{ records: MemoryRecord[]; total: number }> {
    const where: Condition[] = provenanceConditions(query);
    if (query.date) where.push({ field: 'date', op: 'eq', value: query.date });
    if (query.tag) where.push({ field: 'tags', op: 'contains', value: query.tag });
    if (query.source) where.push({ field: 'source', op: 'eq', value: query.source });
    const { docs, total } = await this.collection.list(
      { ...scope, where },
      {
        // Dates sort by the full timestamp so that memories of one day keep their order.
        sortBy: query.sort_by === 'date' ? 'timestamp' : 'importance',
        order: query.sort_order,
        limit: query.limit,
        offset: query.offset,
      },
    );
    return { records: docs.map(fromDoc), total };
  }

  async search(
    scope: Scope,
    query: SearchOptions & { source?: MemorySource | undefined; provenance?: ProvenanceQuery },
  ): Promise<{ hits: Array<{ record: MemoryRecord; score: number; signals: HitSignals }>; total: number }> {
    const { source, provenance, ...options } = query;
    const where: Condition[] = [
      ...(source ? [{ field: 'source', op: 'eq' as const, value: source }] : []),
      ...provenanceConditions(provenance ?? {}),
    ];
    const { hits, total } = await this.collection.search({ ...scope, where }, options);
    return { hits: hits.map((h) => ({ record: fromDoc(h.doc), score: h.score, signals: h.signals })), total };
  }

  async *scanAll(pageSize: number): AsyncIterable<Array<{ scope: Scope; record: MemoryRecord }>> {
    for await (const page of this.collection.scanAll(pageSize)) {
      yield page.map((doc) => ({ scope: { tenant: doc.tenant, agent: doc.agent }, record: fromDoc(doc) }));
    }
  }
}

/** A memory as a document of the vector store. */
export function toDoc(scope: Scope, r: MemoryRecord, vector: Float32Array): Doc {
  return {
    id: r.id,
    tenant: scope.tenant,
    agent: scope.agent,
    text: r.content,
    ...(r.context ? { context: r.context } : {}),
    vector,
    fields: {
      importance: r.importance,
      tags: [...r.tags],
      source: r.source,
      date: r.date,
      timestamp: r.timestamp,
      updated_at: r.updated_at ?? null,
      version: r.version,
      ...provenanceFields(r.written),
    },
  };
}

/** A collection write as a change's store write: journaled where the store offers it. */
export function storeWrite(collection: Collection, write: CollectionWrite): StoreWrite {
  if (collection.journal) return collection.journal.prepare(write);
  if (write.kind === 'delete') return () => collection.delete(write.scope, write.ids);
  return () => (write.kind === 'insert' ? collection.insert(write.docs) : collection.upsert(write.docs));
}

function fromDoc(doc: StoredDoc): MemoryRecord {
  const f = doc.fields;
  return {
    id: doc.id,
    content: doc.text,
    date: String(f.date),
    timestamp: String(f.timestamp),
    ...(typeof f.updated_at === 'string' && f.updated_at ? { updated_at: f.updated_at } : {}),
    importance: Number(f.importance),
    tags: Array.isArray(f.tags) ? [...f.tags] : [],
    source: f.source === 'memory' ? 'memory' : 'daily',
    version: Number(f.version ?? 1),
    ...(doc.context ? { context: doc.context } : {}),
    ...optionalWritten(writtenByOf(f)),
  };
}

const optionalWritten = (written: WrittenBy | undefined) => (written ? { written } : {});

/** The API view of a record (drops what only the store needs; provenance and trust as reads show them). */
export function toMemory(scope: Scope, r: MemoryRecord): Memory {
  const { version: _version, context: _context, written, ...memory } = r;
  return { ...memory, ...provenanceView(scope, written) };
}
