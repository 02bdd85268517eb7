import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  checkExpected,
  checkKey,
  checkPrefix,
  KvChangeHub,
  nextRevision,
  type KvBucketOptions,
  type KvChange,
  type KvEntry,
  type KvStore,
  type KvWatch,
  type KvWriteOptions,
} from '#kv';
import { readIfExists, syncDir, withLock, writeFileAtomic } from './atomic-file.js';

/** What a key's file holds: the value with its revision (and expiry), replaced whole by one atomic rename. */
interface Stored {
  readonly r: number;
  readonly v: string;
  readonly e?: number;
}

const SUFFIX = '.json';
// Tokens may hold `/` (the port's alphabet); on disk it is the only character a file name cannot have.
const toName = (token: string) => token.replace(/%/g, '%25').replace(/\//g, '%2F');
const fromName = (name: string) => name.replace(/%2F/g, '/').replace(/%25/g, '%');

/** Watches of every instance over one folder (one process), so a change through one is seen through all. */
const hubs = new Map<string, KvChangeHub>();

/**
 * The embedded shape's bucket: one file per key under `<dir>` (`a.b.c` is `a/b/c.json`), written via temp file +
 * fsync + rename, so a crash leaves the old value or the new one with its revision, never half of either. Changes
 * of a key are serialised in the process (the embedded shape is one process; two processes on one folder are not
 * supported).
 */
export class FileKvStore implements KvStore {
  private readonly dir: string;
  private readonly hub: KvChangeHub;

  constructor(
    dir: string,
    private readonly options: KvBucketOptions = {},
  ) {
    this.dir = resolve(dir);
    this.hub = hubs.get(this.dir) ?? new KvChangeHub();
    hubs.set(this.dir, this.hub);
  }

  async get(key: string): Promise<KvEntry | undefined> {
    checkKey(key);
    return this.read(key);
  }

  async put(key: string, value: string, options: KvWriteOptions = {}): Promise<number> {
    checkKey(key);
    const path = this.path(key);
    const revision = await withLock(path, async () => {
      const current = await this.read(key);
      checkExpected(key, current, options);
      const r = nextRevision(current?.revision ?? 0);
      const { ttlMs } = this.options;
      const stored: Stored = { r, v: value, ...(ttlMs === undefined ? {} : { e: Date.now() + ttlMs }) };
      await this.write(path, JSON.stringify(stored));
      return r;
    });
    this.hub.emit({ key, entry: { key, value, revision } });
    return revision;
  }

  async delete(key: string, options: KvWriteOptions = {}): Promise<boolean> {
    checkKey(key);
    const path = this.path(key);
    const existed = await withLock(path, async () => {
      const current = await this.read(key);
      checkExpected(key, current, options);
      await this.remove(path);
      return current !== undefined;
    });
    if (existed) this.hub.emit({ key, entry: undefined });
    return existed;
  }

  async keys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((e) => e.key);
  }

  async list(prefix: string): Promise<KvEntry[]> {
    checkPrefix(prefix);
    const tokens = prefix === '' ? [] : prefix.slice(0, -1).split('.');
    const keys = await this.walk(join(this.dir, ...tokens.map(toName)), tokens);
    const entries = await Promise.all(keys.sort().map((key) => this.read(key)));
    return entries.filter((e): e is KvEntry => e !== undefined);
  }

  async watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch> {
    checkPrefix(prefix);
    return this.hub.add(prefix, onChange);
  }

  async close(): Promise<void> {}

  /** Every key stored under `dir`, whose tokens so far are `tokens`. */
  private async walk(dir: string, tokens: readonly string[]): Promise<string[]> {
    const found = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) =>
      err.code === 'ENOENT' || err.code === 'ENOTDIR' ? [] : Promise.reject(err),
    );
    const keys: string[] = [];
    for (const d of found) {
      // Dot names are temp files of a write in progress (or left by a crash): never a key.
      if (d.name.startsWith('.')) continue;
      if (d.isDirectory()) keys.push(...(await this.walk(join(dir, d.name), [...tokens, fromName(d.name)])));
      else if (d.name.endsWith(SUFFIX)) keys.push([...tokens, fromName(d.name.slice(0, -SUFFIX.length))].join('.'));
    }
    return keys;
  }

  private async read(key: string): Promise<KvEntry | undefined> {
    const text = await readIfExists(this.path(key));
    if (text === undefined) return undefined;
    const stored = JSON.parse(text) as Stored;
    if (stored.e !== undefined && stored.e <= Date.now()) return undefined;
    return { key, value: stored.v, revision: stored.r };
  }

  private async remove(path: string): Promise<void> {
    await rm(path, { force: true });
    // Without a sync of its folder a removed file can come back after a crash.
    await syncDir(dirname(path)).catch((err: NodeJS.ErrnoException) =>
      err.code === 'ENOENT' ? undefined : Promise.reject(err),
    );
    // Folders left empty go too (a deleted agent or tenant leaves none behind); one that is not empty stops the climb.
    for (let dir = dirname(path); dir.startsWith(`${this.dir}/`); dir = dirname(dir)) {
      if (
        !(await rmdir(dir).then(
          () => true,
          () => false,
        ))
      )
        break;
    }
  }

  /**
   * Writes the key's file; a folder that another key's delete removed as empty between this write's mkdir and its
   * temp file is made again.
   */
  private async write(path: string, data: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await writeFileAtomic(path, data);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
      }
    }
  }

  private path(key: string): string {
    const tokens = key.split('.').map(toName);
    return join(this.dir, ...tokens.slice(0, -1), `${tokens.at(-1)}${SUFFIX}`);
  }
}
