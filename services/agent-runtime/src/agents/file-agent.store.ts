import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readIfExists, withLock, writeFileAtomic } from '#files';
import { safeSegment } from '#sessions';
import type { AgentRecord, AgentStore } from '#agent-registry';

type Table = Record<string, AgentRecord>;

/** A record of the table only (an agent named `constructor` or `__proto__` is not Object.prototype's). */
const own = (table: Table, name: string): AgentRecord | undefined => (Object.hasOwn(table, name) ? table[name] : undefined);

/**
 * Agents as one JSON file per tenant under `<dataDir>/agent-registry/` (the embedded shape: one process).
 * Changes of a tenant's file are serialised in the process and written via temp file + fsync + rename.
 */
export class FileAgentStore implements AgentStore {
  /**
   * The last table read of each file with the file's identity: every request naming an agent asks whether it
   * exists, and one stat costs less than reading and parsing the file again. Writes replace the file (a new
   * inode), so a write by this or another process is always seen.
   */
  private readonly cache = new Map<string, { ino: bigint; mtimeNs: bigint; size: bigint; table: Table }>();

  constructor(private readonly dataDir: string) {}

  async create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }> {
    return this.change<{ record: AgentRecord; created: boolean }>(tenant, (table) => {
      const existing = own(table, record.name);
      if (existing) return { result: { record: existing, created: false } };
      return { table: { ...table, [record.name]: record }, result: { record, created: true } };
    });
  }

  async get(tenant: string, name: string): Promise<AgentRecord | undefined> {
    return own(await this.read(tenant), name);
  }

  async list(tenant: string): Promise<AgentRecord[]> {
    return Object.values(await this.read(tenant));
  }

  async update(tenant: string, record: AgentRecord): Promise<boolean> {
    return this.change(tenant, (table) =>
      own(table, record.name) ? { table: { ...table, [record.name]: record }, result: true } : { result: false },
    );
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return this.change(tenant, (table) => {
      if (!own(table, name)) return { result: false };
      const { [name]: _gone, ...rest } = table;
      return { table: rest, result: true };
    });
  }

  async close(): Promise<void> {}

  private path(tenant: string): string {
    return join(this.dataDir, 'agent-registry', `${safeSegment(tenant)}.json`);
  }

  private async read(tenant: string): Promise<Table> {
    const path = this.path(tenant);
    const seen = await stat(path, { bigint: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    const cached = this.cache.get(path);
    if (seen && cached && cached.ino === seen.ino && cached.mtimeNs === seen.mtimeNs && cached.size === seen.size) return cached.table;
    const text = await readIfExists(path);
    const table = text === undefined ? {} : (JSON.parse(text) as Table);
    // Read after the stat: a file replaced in between is cached under the older identity and read again next time.
    if (seen && text !== undefined) this.cache.set(path, { ino: seen.ino, mtimeNs: seen.mtimeNs, size: seen.size, table });
    else this.cache.delete(path);
    return table;
  }

  private change<T>(tenant: string, fn: (table: Table) => { table?: Table; result: T }): Promise<T> {
    const key = this.path(tenant);
    return withLock(key, async () => {
      const { table, result } = fn(await this.read(tenant));
      if (table) await writeFileAtomic(key, JSON.stringify(table));
      return result;
    });
  }
}
