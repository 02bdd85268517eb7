import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { safeSegment } from '#sessions';
import type { AgentRecord, AgentStore } from './agent.store.js';

type Table = Record<string, AgentRecord>;

/**
 * Agents as one JSON file per tenant under `<dataDir>/agent-registry/` (the embedded shape: one process).
 * Changes of a tenant's file are serialised in the process and written via temp file + fsync + rename.
 */
export class FileAgentStore implements AgentStore {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly dataDir: string) {}

  async create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }> {
    return this.change<{ record: AgentRecord; created: boolean }>(tenant, (table) => {
      const existing = table[record.name];
      if (existing) return { result: { record: existing, created: false } };
      return { table: { ...table, [record.name]: record }, result: { record, created: true } };
    });
  }

  async get(tenant: string, name: string): Promise<AgentRecord | undefined> {
    return (await this.read(tenant))[name];
  }

  async list(tenant: string): Promise<AgentRecord[]> {
    return Object.values(await this.read(tenant));
  }

  async update(tenant: string, record: AgentRecord): Promise<boolean> {
    return this.change(tenant, (table) =>
      table[record.name] ? { table: { ...table, [record.name]: record }, result: true } : { result: false },
    );
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return this.change(tenant, (table) => {
      if (!table[name]) return { result: false };
      const { [name]: _gone, ...rest } = table;
      return { table: rest, result: true };
    });
  }

  async close(): Promise<void> {}

  private path(tenant: string): string {
    return join(this.dataDir, 'agent-registry', `${safeSegment(tenant)}.json`);
  }

  private async read(tenant: string): Promise<Table> {
    try {
      return JSON.parse(await readFile(this.path(tenant), 'utf8')) as Table;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
  }

  private change<T>(tenant: string, fn: (table: Table) => { table?: Table; result: T }): Promise<T> {
    const key = this.path(tenant);
    const run = (this.tails.get(key) ?? Promise.resolve()).then(async () => {
      const { table, result } = fn(await this.read(tenant));
      if (table) await writeAtomic(key, JSON.stringify(table));
      return result;
    });
    this.tails.set(key, run.catch(() => undefined));
    return run;
  }
}

async function writeAtomic(path: string, data: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
