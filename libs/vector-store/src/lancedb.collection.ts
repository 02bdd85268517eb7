import { Index, MatchQuery, type Table } from '@lancedb/lancedb';
import type { Schema } from 'apache-arrow';
import { assertSortable, assertValidDoc } from './collection-spec.js';
import { fuse, type Candidate } from './fusion.js';
import { filterWhere, idsWhere } from './lancedb-filter.js';
import { docColumns, fieldColumn, fromRow, rowVector, toArrowTable, toRow } from './lancedb-rows.js';
import type { Collection, CollectionSpec, Doc, DocScope, Filter, ListOptions, SearchHit, SearchOptions, StoredDoc } from './vector-store.js';

/** Tuning knobs of the embedded store; the defaults suit up to a few 100k docs per collection. */
export interface LanceDbTuning {
  /** Below this many rows vector search is brute force (exact and fast); at it an IVF_FLAT index is built. */
  readonly vectorIndexMinRows: number;
  /** Rows written since the last optimize() that trigger compaction and index refresh. */
  readonly optimizeEveryRows: number;
  /** IVF partitions probed per vector query once the index exists. */
  readonly nprobes: number;
  /** IVF_FLAT is exact within probed partitions; HNSW_SQ is faster on large tables (TOOLCHAIN: avoid IVF_PQ, poor recall). */
  readonly vectorIndex: 'ivf_flat' | 'hnsw_sq';
}

export const DEFAULT_LANCEDB_TUNING: LanceDbTuning = { vectorIndexMinRows: 50_000, optimizeEveryRows: 2_000, nprobes: 20, vectorIndex: 'ivf_flat' };

type Row = Record<string, unknown>;

/** One LanceDB table; writes and maintenance run one at a time through a queue. */
export class LanceDbCollection implements Collection {
  private queue: Promise<unknown> = Promise.resolve();
  private pendingRows = 0;
  private hasVectorIndex = false;
  private readonly columns: string[];

  constructor(
    readonly spec: CollectionSpec,
    private readonly table: Table,
    /** Built from the spec with our apache-arrow (the native side's schema objects are a different arrow build). */
    private readonly schema: Schema,
    private readonly tuning: LanceDbTuning,
  ) {
    this.columns = docColumns(spec);
  }

  /** Creates the scalar and full-text indexes of a new (empty) table. */
  static async createIndexes(table: Table, spec: CollectionSpec): Promise<void> {
    for (const column of ['tenant', 'agent', 'id']) await table.createIndex(column, { config: Index.btree() });
    await table.createIndex('text', { config: Index.fts({ withPosition: false }) });
    for (const [field, type] of Object.entries(spec.fields)) {
      if (type === 'string[]') await table.createIndex(fieldColumn(field), { config: Index.labelList() });
    }
  }

  async init(): Promise<this> {
    const indices = await this.table.listIndices();
    this.hasVectorIndex = indices.some((i) => i.columns.includes('vector'));
    return this;
  }

  upsert(docs: readonly Doc[]): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    for (const doc of docs) assertValidDoc(this.spec, doc);
    const unique = new Map<string, Doc>();
    for (const doc of docs) unique.set(JSON.stringify([doc.tenant, doc.agent, doc.id]), doc);
    const data = toArrowTable(this.schema, [...unique.values()].map((d) => toRow(this.spec, d)));
    return this.serial(async () => {
      await this.table.mergeInsert(['tenant', 'agent', 'id']).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
      this.afterWrite(unique.size);
    });
  }

  async get(scope: DocScope, ids: readonly string[]): Promise<StoredDoc[]> {
    if (ids.length === 0) return [];
    const rows = await this.table.query().where(idsWhere(scope, ids)).select(this.columns).toArray();
    return rows.map((r: Row) => fromRow(this.spec, r));
  }

  delete(scope: DocScope, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.serial(async () => {
      const rows = await this.table.query().where(idsWhere(scope, ids)).select(['id']).toArray();
      const found = [...new Set(rows.map((r: Row) => r.id as string))];
      if (found.length > 0) await this.table.delete(idsWhere(scope, found));
      return found;
    });
  }

  async list(filter: Filter, options: ListOptions): Promise<{ docs: StoredDoc[]; total: number }> {
    assertSortable(this.spec, options.sortBy);
    const where = filterWhere(this.spec, filter);
    const ascending = options.order === 'asc';
    const [total, rows] = await Promise.all([
      this.table.countRows(where),
      this.table
        .query()
        .where(where)
        .orderBy([
          { columnName: fieldColumn(options.sortBy), ascending, nullsFirst: false },
          { columnName: 'id', ascending: true },
        ])
        .offset(options.offset)
        .limit(options.limit)
        .select(this.columns)
        .toArray(),
    ]);
    return { docs: rows.map((r: Row) => fromRow(this.spec, r)), total };
  }

  async search(filter: Filter, options: SearchOptions): Promise<{ hits: SearchHit[]; total: number }> {
    const where = filterWhere(this.spec, filter);
    const pool = Math.max(options.limit * 5, 100);
    const [dense, lexical] = await Promise.all([this.denseCandidates(where, options.vector, pool), this.textCandidates(where, options, pool)]);
    const fused = fuse<StoredDoc>([...dense, ...lexical], (d) => d.id, options.minScore);
    return { hits: fused.slice(0, options.limit).map(({ item, score }) => ({ doc: item, score })), total: fused.length };
  }

  async *scanAll(pageSize: number): AsyncIterable<StoredDoc[]> {
    let page: StoredDoc[] = [];
    for await (const batch of this.table.query().select(this.columns)) {
      for (const row of batch.toArray() as Row[]) {
        page.push(fromRow(this.spec, row));
        if (page.length >= pageSize) {
          yield page;
          page = [];
        }
      }
    }
    if (page.length > 0) yield page;
  }

  /** Columns that carry an index (for diagnostics and tests). */
  async indexedColumns(): Promise<string[]> {
    return (await this.table.listIndices()).flatMap((i) => i.columns);
  }

  /** Waits for queued writes and maintenance, then releases the table. */
  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    this.table.close();
  }

  private async denseCandidates(where: string, vector: Float32Array, pool: number): Promise<Candidate<StoredDoc>[]> {
    if (!vector.some((x) => x !== 0)) return [];
    let query = this.table.vectorSearch(vector).column('vector').distanceType('cosine').where(where);
    if (this.hasVectorIndex) query = query.nprobes(this.tuning.nprobes);
    const rows = await query.select([...this.columns, '_distance']).limit(pool).toArray();
    return rows.map((r: Row) => ({ item: fromRow(this.spec, r), cosine: 1 - (r._distance as number) }));
  }

  private async textCandidates(where: string, options: SearchOptions, pool: number): Promise<Candidate<StoredDoc>[]> {
    if (options.text.trim() === '') return [];
    const rows = await this.table
      .query()
      .fullTextSearch(new MatchQuery(options.text, 'text'))
      .where(where)
      .select([...this.columns, 'vector', '_score'])
      .limit(pool)
      .toArray();
    return rows.map((r: Row) => ({ item: fromRow(this.spec, r), bm25: r._score as number, cosine: cosineOf(options.vector, rowVector(r)) }));
  }

  /** Counts written rows; past the threshold, queues maintenance behind the writes without making the caller wait. */
  private afterWrite(rows: number): void {
    this.pendingRows += rows;
    if (this.pendingRows < this.tuning.optimizeEveryRows) return;
    this.pendingRows = 0;
    void this.maintain().catch((err: unknown) => {
      this.lastMaintenanceError = err;
    });
  }

  /** The last background optimize/index failure, if any (the data itself stays correct without it). */
  lastMaintenanceError: unknown;

  /** Builds the vector index once the table is large enough, compacts fragments and folds new rows into indexes; queued behind writes. */
  maintain(): Promise<void> {
    return this.serial(() => this.runMaintenance());
  }

  private async runMaintenance(): Promise<void> {
    const rows = this.hasVectorIndex ? 0 : await this.table.countRows();
    if (!this.hasVectorIndex && rows >= this.tuning.vectorIndexMinRows) {
      const numPartitions = Math.max(1, Math.round(Math.sqrt(rows)));
      const config =
        this.tuning.vectorIndex === 'hnsw_sq'
          ? Index.hnswSq({ distanceType: 'cosine', numPartitions: Math.max(1, Math.round(rows / 50_000)) })
          : Index.ivfFlat({ distanceType: 'cosine', numPartitions });
      await this.table.createIndex('vector', { config });
      this.hasVectorIndex = true;
    }
    await this.table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function cosineOf(a: Float32Array, b: Float32Array): number | undefined {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? undefined : dot / Math.sqrt(na * nb);
}
