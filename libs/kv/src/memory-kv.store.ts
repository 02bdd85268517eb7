import { checkKey, checkPrefix, nextRevision } from './kv-key.js';
import { KvChangeHub } from './kv-change-hub.js';
import {
  KvConflictError,
  type KvBucketOptions,
  type KvChange,
  type KvEntry,
  type KvStore,
  type KvWatch,
  type KvWriteOptions,
} from './kv-store.js';

interface Held {
  readonly value: string;
  readonly revision: number;
  readonly expiresAt?: number;
}

/**
 * A bucket in this process's memory, for data that lives as long as the process does in the embedded shape (the
 * state of running turns, Idempotency-Key reservations, credential revocations): nothing reaches the disk.
 */
export class MemoryKvStore implements KvStore {
  private readonly entries = new Map<string, Held>();
  private readonly hub = new KvChangeHub();
  /** When expired entries nobody reads again are next dropped (a long-lived process must not keep them). */
  private nextSweep = 0;

  constructor(private readonly options: KvBucketOptions = {}) {}

  async get(key: string): Promise<KvEntry | undefined> {
    checkKey(key);
    return this.live(key);
  }

  async put(key: string, value: string, options: KvWriteOptions = {}): Promise<number> {
    checkKey(key);
    const current = this.live(key);
    checkExpected(key, current, options);
    const revision = nextRevision(current?.revision ?? 0);
    const expiresAt = this.options.ttlMs === undefined ? undefined : Date.now() + this.options.ttlMs;
    this.entries.set(key, { value, revision, expiresAt });
    this.sweep();
    this.hub.emit({ key, entry: { key, value, revision } });
    return revision;
  }

  async delete(key: string, options: KvWriteOptions = {}): Promise<boolean> {
    checkKey(key);
    const current = this.live(key);
    checkExpected(key, current, options);
    if (!current) return false;
    this.entries.delete(key);
    this.hub.emit({ key, entry: undefined });
    return true;
  }

  async keys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((e) => e.key);
  }

  async list(prefix: string): Promise<KvEntry[]> {
    checkPrefix(prefix);
    const found: KvEntry[] = [];
    for (const key of this.entries.keys()) {
      const entry = key.startsWith(prefix) ? this.live(key) : undefined;
      if (entry) found.push(entry);
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch> {
    checkPrefix(prefix);
    return this.hub.add(prefix, onChange);
  }

  async close(): Promise<void> {
    this.hub.clear();
  }

  private sweep(): void {
    const { ttlMs } = this.options;
    if (ttlMs === undefined || Date.now() < this.nextSweep) return;
    this.nextSweep = Date.now() + Math.max(ttlMs, 1_000);
    for (const key of [...this.entries.keys()]) this.live(key);
  }

  private live(key: string): KvEntry | undefined {
    const held = this.entries.get(key);
    if (!held) return undefined;
    if (held.expiresAt !== undefined && held.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return { key, value: held.value, revision: held.revision };
  }
}

/** Throws the conflict of a compare-and-set whose expected revision is not the current one. */
export function checkExpected(key: string, current: KvEntry | undefined, options: KvWriteOptions): void {
  if (options.expected === undefined) return;
  const actual = current?.revision ?? 0;
  if (actual !== options.expected) throw new KvConflictError(key, options.expected, actual);
}
