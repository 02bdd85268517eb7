import { Metrics } from '#metrics';
import { connect, Session, type Connection, type Table } from '@lancedb/lancedb';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { addedFields, assertValidSpec, embedderMismatch } from './collection-spec.js';
import { DEFAULT_LANCEDB_TUNING, LanceDbCollection, type LanceDbTuning } from './lancedb.collection.js';
import { CONTEXT_COLUMN, DOC_COLUMN, fieldColumn, readMeta, tableSchema } from './lancedb-rows.js';
import { LanceDbWriterLock } from './lancedb-writer-lock.js';
import type { CollectionSpec, FieldType, VectorStore } from './vector-store.js';
import type { ResidentBudget } from './mirror/resident-budget.js';

export interface LanceDbStoreOptions {
  /** Directory holding the tables (created if missing). */
  readonly dir: string;
  readonly tuning?: Partial<LanceDbTuning>;
  /** How long opening waits for another process's lock on a table to go stale (a crashed holder) before refusing. */
  readonly lockWaitMs?: number;
  /**
   * LanceDB's caches (bytes): file metadata and index pages. Its defaults (1 GB and 6 GB) let every table version a
   * write creates stay cached; reads here come from memory (CollectionMirror), so small caches cost nothing.
   */
  readonly cache?: { readonly metadataBytes?: number; readonly indexBytes?: number };
  /** The memory budget of the in-memory scope indexes; the process's shared one (ALFRED_MEMORY_CACHE_MB) by default. */
  readonly budget?: ResidentBudget;
}

const DEFAULT_CACHE = { metadataBytes: 16 * 2 ** 20, indexBytes: 32 * 2 ** 20 };

/**
 * The embedded vector store: one LanceDB table per collection under `dir`. The embedder id, dimension
 * and field types are kept in the table's Arrow schema metadata, so they cannot drift from the data.
 */
export class LanceDbStore implements VectorStore {
  readonly kind = 'lancedb' as const;
  private readonly tuning: LanceDbTuning;
  private db: Promise<Connection> | undefined;
  private readonly open_ = new Map<string, Promise<LanceDbCollection>>();
  /** Writer locks of the tables this store opened, held until close (one writing process per table). */
  private readonly locks = new Map<string, Promise<LanceDbWriterLock>>();
  /** Stop sampling each open table's row count for /metrics. */
  private readonly sizes = new Map<string, () => void>();

  constructor(private readonly options: LanceDbStoreOptions) {
    this.tuning = { ...DEFAULT_LANCEDB_TUNING, ...options.tuning };
  }

  open(spec: CollectionSpec): Promise<LanceDbCollection> {
    assertValidSpec(spec);
    const cached = this.open_.get(spec.name);
    if (cached !== undefined)
      return cached.then((c) => {
        this.assertSameSpec(c.spec, spec);
        return c;
      });
    const opening = this.openOrCreate(spec);
    this.open_.set(spec.name, opening);
    // A refused open (an embedder mismatch) leaves the table to whoever fixes it, such as `alfred reindex`.
    opening.catch(() => {
      this.open_.delete(spec.name);
      void this.unlock(spec.name);
    });
    return opening;
  }

  async describe(name: string): Promise<{ embedderId: string; dimension: number } | undefined> {
    // A table this process holds open is described by its spec: readiness probes ask every second, and reading the
    // manifest from disk each time queued behind the writers' fsyncs on a busy disk (a probe past its 1 s budget).
    const open = await this.open_.get(name)?.catch(() => undefined);
    if (open !== undefined) return { embedderId: open.spec.embedderId, dimension: open.spec.dimension };
    const db = await this.connection();
    if (!(await db.tableNames()).includes(name)) return undefined;
    const table = await db.openTable(name);
    try {
      const meta = readMeta(await table.schema());
      return meta === undefined ? undefined : { embedderId: meta.embedderId, dimension: meta.dimension };
    } finally {
      table.close();
    }
  }

  async recreate(spec: CollectionSpec): Promise<LanceDbCollection> {
    assertValidSpec(spec);
    await this.lock(spec.name);
    const db = await this.connection();
    const cached = this.open_.get(spec.name);
    this.open_.delete(spec.name);
    if (cached !== undefined) await (await cached.catch(() => undefined))?.close();
    if ((await db.tableNames()).includes(spec.name)) await db.dropTable(spec.name);
    return this.open(spec);
  }

  async drop(name: string): Promise<void> {
    const cached = this.open_.get(name);
    this.open_.delete(name);
    if (cached !== undefined) await (await cached.catch(() => undefined))?.close();
    this.sizes.get(name)?.();
    this.sizes.delete(name);
    const db = await this.connection();
    if ((await db.tableNames()).includes(name)) await db.dropTable(name);
    await this.unlock(name);
  }

  async close(): Promise<void> {
    const collections = await Promise.allSettled(this.open_.values());
    this.open_.clear();
    for (const untrack of this.sizes.values()) untrack();
    this.sizes.clear();
    for (const c of collections) if (c.status === 'fulfilled') await c.value.close();
    if (this.db !== undefined) (await this.db).close();
    this.db = undefined;
    const locks = await Promise.allSettled(this.locks.values());
    this.locks.clear();
    for (const l of locks) if (l.status === 'fulfilled') await l.value.release();
  }

  private async unlock(table: string): Promise<void> {
    const held = this.locks.get(table);
    this.locks.delete(table);
    await (await held?.catch(() => undefined))?.release();
  }

  private lock(table: string): Promise<LanceDbWriterLock> {
    let held = this.locks.get(table);
    if (held === undefined) {
      held = LanceDbWriterLock.acquire(this.options.dir, table, this.options.lockWaitMs ?? 12_000);
      this.locks.set(table, held);
      held.catch(() => this.locks.delete(table));
    }
    return held;
  }

  private connection(): Promise<Connection> {
    const cache = { ...DEFAULT_CACHE, ...this.options.cache };
    this.db ??= connect(this.options.dir, {}, new Session(BigInt(cache.indexBytes), BigInt(cache.metadataBytes)));
    return this.db;
  }

  private async openOrCreate(spec: CollectionSpec): Promise<LanceDbCollection> {
    await this.lock(spec.name);
    const db = await this.connection();
    const exists = (await db.tableNames()).includes(spec.name);
    const table = exists ? await db.openTable(spec.name) : await this.create(db, spec);
    try {
      await this.upgrade(table, spec);
    } catch (err) {
      table.close();
      throw err;
    }
    const order = (await table.schema()).fields.map((f) => f.name);
    this.sizes.set(
      spec.name,
      Metrics.storeSize.track({ store: 'lancedb', collection: spec.name }, () => table.countRows()),
    );
    return new LanceDbCollection(
      spec,
      table,
      tableSchema(spec, order),
      this.tuning,
      await table.countRows(),
      await LanceDbCollection.unindexedRows(table),
      this.options.budget,
    );
  }

  /**
   * Checks a stored table against the spec and adds what the spec adds: new fields, the context column of old tables.
   */
  private async upgrade(table: Table, spec: CollectionSpec): Promise<void> {
    const schema = await table.schema();
    const meta = readMeta(schema);
    if (meta === undefined)
      throw new AlfredError(
        ErrorCode.Internal,
        `table ${spec.name} in ${this.options.dir} has no Alfred metadata; it was not made by Alfred`,
      );
    if (meta.embedderId !== spec.embedderId || meta.dimension !== spec.dimension) throw embedderMismatch(spec, meta);
    const stored = storedFields(schema, meta.fields);
    const added = addedFields(spec, stored);
    if (added.length > 0)
      await table.addColumns(
        added.map(([field, type]) => ({
          name: fieldColumn(field),
          valueSql: `CAST(NULL AS ${sqlType(spec, field, type)})`,
        })),
      );
    if (!schema.fields.some((f) => f.name === CONTEXT_COLUMN)) {
      // Tables made before Doc.context gain the column (null for every row); nothing else changes.
      await table.addColumns([{ name: CONTEXT_COLUMN, valueSql: 'CAST(NULL AS STRING)' }]);
    }
    if (!schema.fields.some((f) => f.name === DOC_COLUMN)) {
      // Tables made before the doc column gain it, null in their rows: a cold load reads those rows' columns instead,
      // and a row has it once written again.
      await table.addColumns([{ name: DOC_COLUMN, valueSql: 'CAST(NULL AS STRING)' }]);
    }
  }

  private async create(db: Connection, spec: CollectionSpec): Promise<Table> {
    const table = await db.createEmptyTable(spec.name, tableSchema(spec), { mode: 'create', existOk: false });
    await LanceDbCollection.createIndexes(table, spec);
    return table;
  }

  /** A collection this store has open is asked for again: the same spec, or the open one is refused. */
  private assertSameSpec(stored: CollectionSpec, wanted: CollectionSpec): void {
    if (stored.embedderId !== wanted.embedderId || stored.dimension !== wanted.dimension)
      throw embedderMismatch(wanted, stored);
    if (addedFields(wanted, stored.fields).length > 0) {
      throw new AlfredError(ErrorCode.Conflict, `collection ${wanted.name} is open with fewer fields than asked for`, {
        collection: wanted.name,
      });
    }
  }
}

/** The fields a stored table has: those its metadata was made with, and those added as columns since. */
function storedFields(
  schema: { fields: Array<{ name: string; type: { toString(): string } }> },
  meta: Readonly<Record<string, FieldType>>,
): Record<string, FieldType> {
  const fields: Record<string, FieldType> = { ...meta };
  for (const f of schema.fields) {
    if (!f.name.startsWith('f_') || Object.keys(fields).some((k) => fieldColumn(k) === f.name)) continue;
    const type = String(f.type);
    fields[f.name.slice(2)] = type.startsWith('List')
      ? 'string[]'
      : type === 'Int8'
        ? 'boolean'
        : type === 'Float64'
          ? 'number'
          : 'string';
  }
  return fields;
}

function sqlType(spec: CollectionSpec, field: string, type: FieldType): string {
  if (type === 'string[]') {
    throw new AlfredError(
      ErrorCode.Conflict,
      `a list field (${field}) cannot be added to collection ${spec.name}; run \`alfred reindex\``,
      { collection: spec.name },
    );
  }
  return { string: 'STRING', number: 'DOUBLE', boolean: 'TINYINT' }[type];
}
