import { Index, type Table } from '@lancedb/lancedb';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { Metrics } from '#metrics';
import { Backoff } from '#retry';
import type { Schema } from 'apache-arrow';
import { assertSortable, assertValidCondition, assertValidDoc } from './collection-spec.js';
import {
  decodeWrite,
  encodeWrite,
  type CollectionWrite,
  type JournaledWrites,
  type PreparedWrite,
} from './collection-write.js';
import { CompactionSchedule } from './lancedb-compaction.js';
import { filterWhere, idsWhere, scopeWhere } from './lancedb-filter.js';
import { collapse, PendingWrites, type CollapsedWrites, type PendingWrite } from './lancedb-pending.js';
import {
  DOC_COLUMN,
  docCell,
  docColumns,
  fieldColumn,
  fromDocCell,
  fromRow,
  partialSchema,
  rowVector,
  storedOf,
  toArrowTable,
  toCell,
  toRow,
} from './lancedb-rows.js';
import { CollectionMirror, pendingVectors, type ScopeLoader } from './mirror/collection-mirror.js';
import type { ScopeMirror } from './mirror/scope-mirror.js';
import type { ResidentBudget } from './mirror/resident-budget.js';
import { RwGate } from './rw-gate.js';
import type {
  Collection,
  CollectionSpec,
  Doc,
  DocScope,
  FieldUpdate,
  Filter,
  ListOptions,
  SearchHit,
  SearchOptions,
  StoredDoc,
} from './vector-store.js';

/** Tuning of the embedded store's table writes (reads are served from memory; see CollectionMirror). */
export interface LanceDbTuning {
  /** Rows waiting for the table that start a flush at once. */
  readonly flushRows: number;
  /** The longest a journaled write waits in memory for the table. */
  readonly flushDelayMs: number;
  /** Rows written since the last compaction that a compaction waits for at least (see CompactionSchedule). */
  readonly compactMinRows: number;
  /** Flushes after which a compaction runs whatever the rows. */
  readonly compactMaxFlushes: number;
  /** Rows the scalar indexes may leave uncovered, as a share of those they cover, before they are rebuilt. */
  readonly indexSlack: number;
}

export const DEFAULT_LANCEDB_TUNING: LanceDbTuning = {
  flushRows: 4_096,
  flushDelayMs: 1_000,
  compactMinRows: 10_000,
  compactMaxFlushes: 256,
  indexSlack: 1 / 8,
};

type Row = Record<string, unknown>;
/** The scalar indexes a scope's reads go through, rebuilt between compactions (see `reindex`). */
const SCOPE_READ_INDEXES = ['agent', 'id'];
/** Ids per statement that lists them in its predicate (deletes, reads by id). */
const IDS_PER_STATEMENT = 1_000;

/**
 * One LanceDB table. Every write reaches the table through one path, the flush: writes wait in `pending` (journaled
 * ones already durable in the caller's log and visible in memory, direct ones answered once committed), and a flush
 * commits all of them as their net effect — one delete, one append, one merge at most — so concurrent and bursty
 * writes share commits and the table gains few, large fragments. Reads by id and searches are served by the mirror;
 * lists and scans read the table after flushing what they must see. Table work runs one step at a time (`serial`);
 * a gate keeps reads of the table apart from the steps that move writes into it or delete replaced files.
 */
export class LanceDbCollection implements Collection {
  readonly journal: JournaledWrites;
  private readonly pending = new PendingWrites();
  private readonly gate = new RwGate();
  private readonly columns: string[];
  private readonly mirror: CollectionMirror;
  private readonly compaction: CompactionSchedule;
  private serial: Promise<unknown> = Promise.resolve();
  /** A flush queued and not started yet: it will take everything pending when it starts. */
  private queuedFlush: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Waits before a failed flush is tried again: 100 ms doubling to 5 s. */
  private readonly flushBackoff = new Backoff({ baseMs: 100, maxMs: 5_000 });
  private closed = false;
  /** The last failed flush or compaction (journaled writes stay pending and are retried; see `flushSoon`). */
  lastMaintenanceError: unknown;

  constructor(
    readonly spec: CollectionSpec,
    private readonly table: Table,
    /** Built from the spec with our apache-arrow (the native side's schema objects are a different arrow build). */
    private readonly schema: Schema,
    private readonly tuning: LanceDbTuning,
    rowsAtOpen: number,
    /** Rows the scalar indexes did not cover at open. */
    unindexedAtOpen: number,
    budget?: ResidentBudget,
  ) {
    this.columns = docColumns(spec);
    this.mirror = new CollectionMirror(spec, (scope, install, dense) => this.loadScope(scope, install, dense), budget);
    this.compaction = new CompactionSchedule(
      { minRows: tuning.compactMinRows, maxFlushes: tuning.compactMaxFlushes, indexSlack: tuning.indexSlack },
      rowsAtOpen,
      unindexedAtOpen,
    );
    this.journal = {
      name: spec.name,
      prepare: (write) => this.prepare(write),
      replay: (data) => this.applyJournaled(asUpsert(decodeWrite(data))),
      flush: () => this.flush(),
    };
  }

  /** Creates the scalar indexes of a new (empty) table; text search is the mirror's, so no full-text index. */
  static async createIndexes(table: Table, spec: CollectionSpec): Promise<void> {
    for (const column of ['tenant', 'agent', 'id']) await table.createIndex(column, { config: Index.btree() });
    for (const [field, type] of Object.entries(spec.fields)) {
      if (type === 'string[]') await table.createIndex(fieldColumn(field), { config: Index.labelList() });
    }
  }

  /**
   * One scope's documents for its in-memory index: a filtered read (the tenant and agent columns are indexed) of their
   * ids and `doc` column (rows older than that column: a second read of their columns) and, in the same step, the
   * scope's writes the table does not hold yet.
   */
  private loadScope(scope: DocScope, install: Parameters<ScopeLoader>[1], dense: boolean): Promise<ScopeMirror> {
    return this.gate.shared(async () => {
      const columns = dense ? ['id', DOC_COLUMN, 'vector'] : ['id', DOC_COLUMN];
      const rows = await this.table.query().where(scopeWhere(scope)).select(columns).toArray();
      const docs: StoredDoc[] = [];
      const older: string[] = [];
      for (const r of rows as Row[]) {
        const cell = r[DOC_COLUMN];
        if (typeof cell === 'string') docs.push(fromDocCell(this.spec, scope, r.id as string, cell));
        else older.push(r.id as string);
      }
      for (let i = 0; i < older.length; i += IDS_PER_STATEMENT) {
        const where = idsWhere(scope, older.slice(i, i + IDS_PER_STATEMENT));
        for (const r of await this.table.query().where(where).select(this.columns).toArray())
          docs.push(fromRow(this.spec, r as Row));
      }
      return install(
        docs,
        this.pending.forScope(scope),
        dense ? rows.map((r: Row) => ({ id: r.id as string, vector: rowVector(r) })) : undefined,
      );
    });
  }

  upsert(docs: readonly Doc[]): Promise<void> {
    return this.direct({ kind: 'upsert', docs });
  }

  insert(docs: readonly Doc[]): Promise<void> {
    return this.direct({ kind: 'insert', docs });
  }

  /**
   * From the scope's index when it is in memory; otherwise a read of those ids, brought up to date with pending writes.
   */
  async get(scope: DocScope, ids: readonly string[]): Promise<StoredDoc[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    const resident = this.mirror.residentNow(scope);
    if (resident) return unique.flatMap((id) => resident.get(id) ?? []);
    return this.gate.shared(async () => {
      const rows = await this.table.query().where(idsWhere(scope, unique)).select(this.columns).toArray();
      const docs = new Map<string, StoredDoc | undefined>(
        rows.map((r: Row) => [r.id as string, fromRow(this.spec, r)]),
      );
      for (const w of this.pending.forScope(scope)) {
        if (w.kind === 'delete') for (const id of w.ids) docs.set(id, undefined);
        else for (const d of w.docs) if (unique.includes(d.id)) docs.set(d.id, this.mirror.complete(storedOf(d)));
      }
      return unique.flatMap((id) => docs.get(id) ?? []);
    });
  }

  /** Queued in call order with the other writes; answers the ids that existed when it was applied. */
  delete(scope: DocScope, ids: readonly string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return Promise.resolve([]);
    return new Promise<string[]>((resolve, reject) => {
      this.pending.push({
        write: { kind: 'delete', scope, ids: unique },
        settle: { resolve: () => undefined, reject },
        deleted: resolve,
      });
      void this.flush().catch(() => undefined);
    });
  }

  async list(filter: Filter, options: ListOptions): Promise<{ docs: StoredDoc[]; total: number }> {
    assertSortable(this.spec, options.sortBy);
    const where = filterWhere(this.spec, filter);
    if (this.pending.touches(filter)) await this.flush();
    const ascending = options.order === 'asc';
    const [total, rows] = await this.gate.shared(() =>
      Promise.all([
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
      ]),
    );
    return { docs: rows.map((r: Row) => fromRow(this.spec, r)), total };
  }

  /**
   * Served by the scope's in-memory index (loaded on first use); its vectors are loaded on its first search with one.
   */
  async search(filter: Filter, options: SearchOptions): Promise<{ hits: SearchHit[]; total: number }> {
    for (const c of filter.where ?? []) assertValidCondition(this.spec, c);
    let scope = await this.mirror.resident(filter, options.vector !== undefined);
    if (options.vector !== undefined && scope.dense === undefined) {
      await this.gate.shared(() => this.loadVectors(filter));
      // Dropped from memory meanwhile: load it (and its vectors) again.
      if (this.mirror.residentNow(filter) !== scope) scope = await this.mirror.resident(filter);
    }
    return scope.search(filter.where, options);
  }

  /** A scope's vectors into its dense index: the table's, then those of writes it does not hold yet. */
  private async loadVectors(scope: DocScope): Promise<void> {
    if (!this.mirror.needsDense(scope)) return;
    const rows = await this.table.query().where(scopeWhere(scope)).select(['id', 'vector']).toArray();
    const fromTable = rows.map((r: Row) => ({ id: r.id as string, vector: rowVector(r) }));
    this.mirror.buildDense(scope, [...fromTable, ...pendingVectors(this.pending.forScope(scope))]);
  }

  async *scanAll(pageSize: number): AsyncIterable<StoredDoc[]> {
    await this.flush();
    const docs = await this.gate.shared(async () => {
      const out: StoredDoc[] = [];
      for await (const batch of this.table.query().select(this.columns))
        for (const row of batch.toArray() as Row[]) out.push(fromRow(this.spec, row));
      return out;
    });
    for (let i = 0; i < docs.length; i += pageSize) yield docs.slice(i, i + pageSize);
  }

  /**
   * A merge of only the key columns, the updated fields and the `doc` column (the rows as updated), per set of fields
   * updated together.
   */
  async setFields(updates: readonly FieldUpdate[]): Promise<void> {
    if (updates.length === 0) return;
    for (const u of updates)
      assertValidDoc(this.spec, { ...u, text: '', vector: new Float32Array(this.spec.dimension) });
    await this.flush();
    const groups = new Map<string, FieldUpdate[]>();
    for (const u of updates) {
      const k = Object.keys(u.fields).sort().join(',');
      groups.set(k, [...(groups.get(k) ?? []), u]);
    }
    await this.run(() =>
      this.gate.exclusive(async () => {
        const docs = await this.updatedDocs(updates);
        for (const group of groups.values()) {
          const columns = ['tenant', 'agent', 'id', ...Object.keys(group[0]!.fields).map(fieldColumn), DOC_COLUMN];
          const rows = group.map((u) => {
            const updated = docs.get(docKey(u, u.id));
            return {
              tenant: u.tenant,
              agent: u.agent,
              id: u.id,
              ...Object.fromEntries(Object.entries(u.fields).map(([f, v]) => [fieldColumn(f), toCell(v)])),
              [DOC_COLUMN]: updated ? docCell(this.spec, updated) : null,
            };
          });
          await this.table
            .mergeInsert(['tenant', 'agent', 'id'])
            .whenMatchedUpdateAll()
            .execute(toArrowTable(partialSchema(this.schema, columns), rows));
        }
      }),
    );
    for (const u of updates) {
      const doc = this.mirror.residentNow(u)?.get(u.id);
      if (doc) this.mirror.restate({ ...doc, fields: { ...doc.fields, ...u.fields } });
    }
  }

  /** The stored documents that `updates` change, as every update leaves them (in order). */
  private async updatedDocs(updates: readonly FieldUpdate[]): Promise<Map<string, StoredDoc>> {
    const byScope = new Map<string, { scope: DocScope; ids: Set<string> }>();
    for (const u of updates) {
      const k = docKey(u, '');
      if (!byScope.has(k)) byScope.set(k, { scope: { tenant: u.tenant, agent: u.agent }, ids: new Set() });
      byScope.get(k)!.ids.add(u.id);
    }
    const docs = new Map<string, StoredDoc>();
    for (const { scope, ids } of byScope.values()) {
      const all = [...ids];
      for (let i = 0; i < all.length; i += IDS_PER_STATEMENT) {
        const where = idsWhere(scope, all.slice(i, i + IDS_PER_STATEMENT));
        for (const r of await this.table.query().where(where).select(this.columns).toArray())
          docs.set(docKey(scope, (r as Row).id as string), fromRow(this.spec, r as Row));
      }
    }
    for (const u of updates) {
      const doc = docs.get(docKey(u, u.id));
      if (doc) docs.set(docKey(u, u.id), { ...doc, fields: { ...doc.fields, ...u.fields } });
    }
    return docs;
  }

  /** Rows the agent index (through which a scope's reads go) does not cover yet. */
  static async unindexedRows(table: Table): Promise<number> {
    const agent = (await table.listIndices()).find((i) => i.columns.length === 1 && i.columns[0] === 'agent');
    return agent ? ((await table.indexStats(agent.name))?.numUnindexedRows ?? 0) : 0;
  }

  /** Rows the agent index does not cover yet (for diagnostics and tests). */
  unindexedRows(): Promise<number> {
    return LanceDbCollection.unindexedRows(this.table);
  }

  /** Columns that carry an index (for diagnostics and tests). */
  async indexedColumns(): Promise<string[]> {
    return (await this.table.listIndices()).flatMap((i) => i.columns);
  }

  /** Writes everything pending to the table, then releases it. */
  async close(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.closed = true;
    await this.flush();
    await this.serial.catch(() => undefined);
    this.mirror.clear();
    this.table.close();
  }

  /** Persists every write applied so far (journaled or direct) to the table. */
  flush(): Promise<void> {
    if (this.pending.size === 0)
      return this.serial.then(
        () => undefined,
        () => undefined,
      );
    this.queuedFlush ??= this.run(async () => {
      this.queuedFlush = undefined;
      await this.flushPending();
    });
    return this.queuedFlush;
  }

  /** Compacts the table and frees the files it replaced (see CompactionSchedule for when it runs by itself). */
  maintain(): Promise<void> {
    return this.run(() => this.compact());
  }

  private prepare(write: CollectionWrite): PreparedWrite {
    if (this.closed)
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        `collection ${this.spec.name} is closed; the write was not made`,
      );
    this.validate(write);
    return { target: this.spec.name, data: encodeWrite(write), apply: () => this.applyJournaled(write) };
  }

  private applyJournaled(write: CollectionWrite): void {
    this.mirror.apply(write);
    this.pending.push({ write });
    this.scheduleFlush();
  }

  /** A write without a log of the caller's: answered once the table holds it, and only then visible. */
  private direct(write: CollectionWrite): Promise<void> {
    if (write.kind !== 'delete' && write.docs.length === 0) return Promise.resolve();
    if (this.closed)
      return Promise.reject(
        new AlfredError(ErrorCode.ServiceUnavailable, `collection ${this.spec.name} is closed; the write was not made`),
      );
    this.validate(write);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ write, settle: { resolve, reject } });
      void this.flush().catch(() => undefined);
    });
  }

  private validate(write: CollectionWrite): void {
    if (write.kind !== 'delete') for (const doc of write.docs) assertValidDoc(this.spec, doc);
  }

  private scheduleFlush(): void {
    if (this.pending.rows >= this.tuning.flushRows) this.flushSoon(0);
    else if (this.flushTimer === undefined) this.flushSoon(this.tuning.flushDelayMs);
  }

  /** A flush after `ms`; a failed one is retried with backoff (journaled writes stay pending, in order). */
  private flushSoon(ms: number): void {
    if (this.closed) return;
    clearTimeout(this.flushTimer);
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush().then(
        () => this.flushBackoff.reset(),
        (err: unknown) => {
          this.lastMaintenanceError = err;
          this.flushSoon(this.flushBackoff.next());
        },
      );
    }, ms);
    this.flushTimer.unref();
  }

  /** Runs table work one step at a time, in call order. */
  private run<T>(step: () => Promise<T>): Promise<T> {
    const next = this.serial.then(step, step);
    this.serial = next.catch(() => undefined);
    return next;
  }

  private async flushPending(): Promise<void> {
    const taken: PendingWrite[] = [];
    let rows = 0;
    try {
      await this.gate.exclusive(async () => {
        taken.push(...this.pending.take());
        await this.findDeleted(taken);
        const net = collapse(taken.map((e) => e.write));
        rows = net.rows;
        await this.commit(net);
      });
    } catch (err) {
      // Journaled writes are durable in their log and already visible: they wait for the next flush. Direct ones fail.
      this.pending.restore(taken.filter((e) => !e.settle));
      for (const e of taken) e.settle?.reject(err);
      throw err;
    }
    for (const e of taken) {
      if (!e.settle) continue;
      this.mirror.apply(e.write);
      e.settle.resolve();
      e.deleted?.(e.found ?? []);
    }
    const due = rows > 0 ? this.compaction.flushed(rows) : undefined;
    if (due)
      void this.run(() => (due === 'compact' ? this.compact() : this.reindex())).catch((err: unknown) => {
        this.compaction.failed();
        this.lastMaintenanceError = err;
      });
  }

  /**
   * For each direct delete being flushed, the ids that existed when it was made: those in the table then, as the
   * writes before it in the same flush left them.
   */
  private async findDeleted(taken: PendingWrite[]): Promise<void> {
    const asked = taken.filter((e) => e.deleted && e.write.kind === 'delete');
    if (asked.length === 0) return;
    const exists = new Map<string, boolean>();
    for (const e of asked) {
      const w = e.write as Extract<CollectionWrite, { kind: 'delete' }>;
      const rows = await this.table.query().where(idsWhere(w.scope, w.ids)).select(['id']).toArray();
      for (const id of w.ids) if (!exists.has(docKey(w.scope, id))) exists.set(docKey(w.scope, id), false);
      for (const r of rows as Row[]) exists.set(docKey(w.scope, r.id as string), true);
    }
    // The table's state before this flush, walked forward through the flush's writes in order.
    const state = new Map(exists);
    for (const e of taken) {
      const w = e.write;
      if (w.kind !== 'delete') {
        for (const d of w.docs) state.set(docKey(d, d.id), true);
        continue;
      }
      if (e.deleted) e.found = w.ids.filter((id) => state.get(docKey(w.scope, id)) === true);
      for (const id of w.ids) state.set(docKey(w.scope, id), false);
    }
  }

  private async commit(net: CollapsedWrites): Promise<void> {
    const labels = { store: 'lancedb', collection: this.spec.name };
    for (const { scope, ids } of net.deletes.values()) {
      for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
        await this.table.delete(idsWhere(scope, ids.slice(i, i + IDS_PER_STATEMENT)));
        Metrics.storeCommits.inc(labels);
      }
    }
    if (net.inserts.length > 0) {
      await this.table.add(this.arrow(net.inserts));
      Metrics.storeCommits.inc(labels);
    }
    if (net.upserts.length > 0) {
      await this.table
        .mergeInsert(['tenant', 'agent', 'id'])
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .execute(this.arrow(net.upserts));
      Metrics.storeCommits.inc(labels);
    }
    Metrics.storeRows.inc(labels, net.rows);
  }

  private arrow(docs: readonly Doc[]) {
    return toArrowTable(
      this.schema,
      docs.map((d) => toRow(this.spec, d)),
    );
  }

  /**
   * Compaction, then a second pass that frees the files the first one replaced (LanceDB deletes a replaced version's
   * files only on the next call). Alone: no read may be using the old files when they go.
   */
  private async compact(): Promise<void> {
    await this.gate.exclusive(async () => {
      const cleanup = () => this.table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
      await cleanup();
      await cleanup();
    });
    this.compaction.compacted(await this.table.countRows());
  }

  /**
   * The indexes a scope's reads go through (agent, id: see `scopeWhere`, `idsWhere`) built again over every row, so
   * those reads no longer scan the rows written since the last compaction. Reads go on meanwhile (on the indexes
   * before); the replaced index files go with the next compaction's. The others wait for the compaction: no read
   * filters on the tenant alone, and label lists serve only filtered lists.
   */
  private async reindex(): Promise<void> {
    for (const column of SCOPE_READ_INDEXES) await this.table.createIndex(column, { config: Index.btree() });
    this.compaction.reindexed();
    Metrics.storeIndexBuilds.inc({ store: 'lancedb', collection: this.spec.name });
  }
}

/** A document's key across scopes. */
function docKey(scope: DocScope, id: string): string {
  return `${scope.tenant}\u0000${scope.agent}\u0000${id}`;
}

/** A replayed write may already be in the table: an insert replays as an upsert. */
function asUpsert(write: CollectionWrite): CollectionWrite {
  return write.kind === 'insert' ? { ...write, kind: 'upsert' } : write;
}
