import { Index, type Table } from '@lancedb/lancedb';
import type { Schema } from 'apache-arrow';
import { assertSortable, assertValidCondition, assertValidDoc } from './collection-spec.js';
import { filterWhere, idsWhere, scopeWhere } from './lancedb-filter.js';
import { CollectionMirror } from './mirror/collection-mirror.js';
import { docColumns, fieldColumn, fromRow, rowVector, toArrowTable, toRow } from './lancedb-rows.js';
import { LanceDbWriteQueue, type WriteMode } from './lancedb-write-queue.js';
import type { Collection, CollectionSpec, Doc, DocScope, Filter, ListOptions, SearchHit, SearchOptions, StoredDoc } from './vector-store.js';

/** Tuning knobs of the embedded store's durable table (search is served by the in-memory mirror). */
export interface LanceDbTuning {
  /** Rows written since the last optimize() that trigger compaction. */
  readonly optimizeEveryRows: number;
  /**
   * Commits since the last optimize() that trigger it too: every commit adds a fragment, and scans slow down
   * with their number (LanceDB's advice: optimize after ~20 modifications).
   */
  readonly optimizeEveryCommits: number;
}

export const DEFAULT_LANCEDB_TUNING: LanceDbTuning = {
  optimizeEveryRows: 2_000,
  optimizeEveryCommits: 20,
};

type Row = Record<string, unknown>;

/** One LanceDB table; writes and maintenance run one at a time through a queue that groups concurrent writes into one commit. */
export class LanceDbCollection implements Collection {
  private readonly writes: LanceDbWriteQueue<Doc>;
  private pendingRows = 0;
  private pendingCommits = 0;
  private readonly columns: string[];
  /** Every document in memory: reads by id and every search are served from here (see CollectionMirror). */
  private readonly mirror: CollectionMirror;

  constructor(
    readonly spec: CollectionSpec,
    private readonly table: Table,
    /** Built from the spec with our apache-arrow (the native side's schema objects are a different arrow build). */
    private readonly schema: Schema,
    private readonly tuning: LanceDbTuning,
  ) {
    this.columns = docColumns(spec);
    this.mirror = new CollectionMirror(spec);
    this.writes = new LanceDbWriteQueue((docs, mode) => this.commit(docs, mode));
  }

  /** Creates the scalar indexes of a new (empty) table; text search is the mirror's, so no full-text index. */
  static async createIndexes(table: Table, spec: CollectionSpec): Promise<void> {
    for (const column of ['tenant', 'agent', 'id']) await table.createIndex(column, { config: Index.btree() });
    for (const [field, type] of Object.entries(spec.fields)) {
      if (type === 'string[]') await table.createIndex(fieldColumn(field), { config: Index.labelList() });
    }
  }

  /** Loads every document into the mirror (the in-memory indexes are rebuilt at every open). */
  async init(): Promise<this> {
    const docs: StoredDoc[] = [];
    for await (const page of this.scanAll(4096)) docs.push(...page);
    this.mirror.load(docs);
    return this;
  }

  upsert(docs: readonly Doc[]): Promise<void> {
    return this.write(docs, 'upsert');
  }

  insert(docs: readonly Doc[]): Promise<void> {
    return this.write(docs, 'insert');
  }

  async get(scope: DocScope, ids: readonly string[]): Promise<StoredDoc[]> {
    return this.mirror.get(scope, ids);
  }

  delete(scope: DocScope, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.writes.task(async () => {
      const rows = await this.table.query().where(idsWhere(scope, ids)).select(['id']).toArray();
      const found = [...new Set(rows.map((r: Row) => r.id as string))];
      if (found.length > 0) {
        await this.table.delete(idsWhere(scope, found));
        this.mirror.delete(scope, found);
        this.afterWrite(0);
      }
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

  /** Served by the scope's in-memory indexes; a scope's vectors are loaded on its first search with a vector. */
  async search(filter: Filter, options: SearchOptions): Promise<{ hits: SearchHit[]; total: number }> {
    for (const c of filter.where ?? []) assertValidCondition(this.spec, c);
    if (options.vector !== undefined && this.mirror.needsDense(filter)) await this.writes.task(() => this.loadVectors(filter));
    return this.mirror.search(filter, options);
  }

  /** Reads a scope's vectors into its dense index; queued with the writes, so none lands in between. */
  private async loadVectors(scope: DocScope): Promise<void> {
    if (!this.mirror.needsDense(scope)) return;
    const rows = await this.table.query().where(scopeWhere(scope)).select(['id', 'vector']).toArray();
    this.mirror.buildDense(scope, rows.map((r: Row) => ({ id: r.id as string, vector: rowVector(r) })));
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
    await this.writes.idle();
    this.table.close();
  }

  private write(docs: readonly Doc[], mode: WriteMode): Promise<void> {
    if (docs.length === 0) return Promise.resolve();
    for (const doc of docs) assertValidDoc(this.spec, doc);
    return this.writes.write(docs, mode);
  }

  /** One commit for a group of writes; the last of several writes of one document wins. */
  private async commit(docs: readonly Doc[], mode: WriteMode): Promise<void> {
    const unique = new Map<string, Doc>();
    for (const doc of docs) unique.set(JSON.stringify([doc.tenant, doc.agent, doc.id]), doc);
    const data = toArrowTable(this.schema, [...unique.values()].map((d) => toRow(this.spec, d)));
    if (mode === 'insert') await this.table.add(data);
    else await this.table.mergeInsert(['tenant', 'agent', 'id']).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
    this.mirror.upsert([...unique.values()]);
    this.afterWrite(unique.size);
  }

  /** Counts commits and written rows; past a threshold, queues maintenance behind the writes without making the caller wait. */
  private afterWrite(rows: number): void {
    this.pendingRows += rows;
    this.pendingCommits += 1;
    if (this.pendingRows < this.tuning.optimizeEveryRows && this.pendingCommits < this.tuning.optimizeEveryCommits) return;
    this.pendingRows = 0;
    this.pendingCommits = 0;
    void this.maintain().catch((err: unknown) => {
      this.lastMaintenanceError = err;
    });
  }

  /** The last background optimize/index failure, if any (the data itself stays correct without it). */
  lastMaintenanceError: unknown;

  /**
   * Compacts fragments; queued behind writes, and only inserts (appends, which LanceDB commits concurrently
   * with compaction) may pass it while it runs. No vector index is trained: vectors are searched in memory.
   */
  maintain(): Promise<void> {
    return this.writes.besideInserts(() => this.runMaintenance());
  }

  private async runMaintenance(): Promise<void> {
    await this.table.optimize({ cleanupOlderThan: new Date(Date.now() - 60_000) });
  }
}
