import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { InstalledFrom } from '#contracts';
import { sourceKey } from './git-source.js';

const RecordsFile = z.object({ version: z.literal(1), skills: z.record(z.string(), InstalledFrom) });

/** A tenant's file name (any tenant id, no path tricks). */
const segment = (tenant: string) => encodeURIComponent(tenant).replace(/\./g, '%2E');

/**
 * Where each installed skill of a tenant came from (`installed_from`), one JSON file per tenant beside the skill
 * folders it describes (the registry's volume): replaced whole by an fsynced write and a rename, so a crash leaves
 * the old file or the new one. Changes of one tenant are serialised in this process.
 */
export class InstallRecordsRepository {
  private readonly lanes = new Map<string, Promise<unknown>>();

  constructor(private readonly dir: string) {}

  async all(tenant: string): Promise<Map<string, InstalledFrom>> {
    let text: string;
    try {
      text = await readFile(this.fileOf(tenant), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw err;
    }
    return new Map(Object.entries(RecordsFile.parse(JSON.parse(text)).skills));
  }

  async get(tenant: string, name: string): Promise<InstalledFrom | undefined> {
    return (await this.all(tenant)).get(name);
  }

  /** Names of the tenant's skills installed from `source` (compared as sources are: see sourceKey). */
  async fromSource(tenant: string, source: string): Promise<Map<string, InstalledFrom>> {
    const key = sourceKey(source);
    return new Map([...(await this.all(tenant))].filter(([, r]) => sourceKey(r.source) === key));
  }

  /** Sets (or, with undefined, removes) records in one write; resolves to the records as they were before. */
  change(tenant: string, changes: ReadonlyMap<string, InstalledFrom | undefined>): Promise<Map<string, InstalledFrom>> {
    return this.serially(tenant, async () => {
      const before = await this.all(tenant);
      const next = new Map(before);
      for (const [name, record] of changes) {
        if (record) next.set(name, record);
        else next.delete(name);
      }
      await this.write(tenant, next);
      return before;
    });
  }

  /** Puts every record back as it was (after a change whose files could not be placed). */
  restore(tenant: string, before: ReadonlyMap<string, InstalledFrom>): Promise<void> {
    return this.serially(tenant, () => this.write(tenant, new Map(before)));
  }

  private async write(tenant: string, records: Map<string, InstalledFrom>): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(tenant);
    if (records.size === 0) return rm(file, { force: true });
    const temp = `${file}.${randomUUID()}.tmp`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(JSON.stringify({ version: 1, skills: Object.fromEntries(records) }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    const dir = await open(this.dir, 'r');
    await dir.sync().finally(() => dir.close());
  }

  private fileOf(tenant: string): string {
    return join(this.dir, `${segment(tenant)}.json`);
  }

  private serially<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    const run = (this.lanes.get(tenant) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    this.lanes.set(tenant, tail);
    void tail.then(() => this.lanes.get(tenant) === tail && this.lanes.delete(tenant));
    return run;
  }
}
