import { join } from 'node:path';
import { readIfExists, withLock, writeFileAtomic } from '#files';
import { safeSegment } from '#sessions';
import type { AgentRecord, AgentStore } from './agent.store.js';

type Table = Record<string, AgentRecord>;

/** A record of the table only (an agent named `constructor` or `__proto__` is not Object.prototype's). */
const own = (table: Table, name: string): AgentRecord | undefined => (Object.hasOwn(table, name) ? table[name] : undefined);

/**
 * Agents as one JSON file per tenant under `<dataDir>/agent-registry/` (the embedded shape: one process).
 * Changes of a tenant's file are serialised in the process and written via temp file + fsync + rename.
 */
export class FileAgentStore implements AgentStore {
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
    const text = await readIfExists(this.path(tenant));
    return text === undefined ? {} : (JSON.parse(text) as Table);
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
