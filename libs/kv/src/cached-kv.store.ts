import type { KvChange, KvEntry, KvStore, KvWatch, KvWriteOptions } from './kv-store.js';

/**
 * A bucket whose reads (`get`) are served from memory, kept current by a watch of the whole bucket; everything else
 * goes to the store. Only for a store whose watch tells a change before the write that made it returns (the embedded
 * files' in-process watches): a read after a write, from any instance in the process, never sees the value before it.
 * A store whose watches lag behind writes on other hosts (NATS KV) would serve stale reads for that lag: read it
 * directly. Not for buckets with a TTL (an expiry is no change the watch tells).
 */
export class CachedKvStore implements KvStore {
  /** Cached values by key; null caches a key's absence (asked again and again for names that do not exist). */
  private readonly entries = new Map<string, KvEntry | null>();
  /** Grows with every change seen: a read that overlapped one does not fill the cache. */
  private changes = 0;
  private watching: KvWatch | undefined;

  private constructor(
    private readonly kv: KvStore,
    private readonly capacity: number,
  ) {}

  /** Starts the watch before the first read, so no change made after it is missed. */
  static async open(kv: KvStore, options: { readonly capacity?: number } = {}): Promise<CachedKvStore> {
    const cached = new CachedKvStore(kv, options.capacity ?? 10_000);
    cached.watching = await kv.watch('', (change) => cached.changed(change));
    return cached;
  }

  async get(key: string): Promise<KvEntry | undefined> {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached ?? undefined;
    }
    const seen = this.changes;
    const entry = await this.kv.get(key);
    if (seen === this.changes) {
      this.entries.set(key, entry ?? null);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }

  put(key: string, value: string, options?: KvWriteOptions): Promise<number> {
    return this.kv.put(key, value, options);
  }

  delete(key: string, options?: KvWriteOptions): Promise<boolean> {
    return this.kv.delete(key, options);
  }

  keys(prefix: string): Promise<string[]> {
    return this.kv.keys(prefix);
  }

  list(prefix: string): Promise<KvEntry[]> {
    return this.kv.list(prefix);
  }

  watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch> {
    return this.kv.watch(prefix, onChange);
  }

  async close(): Promise<void> {
    await this.watching?.stop();
    this.entries.clear();
    await this.kv.close();
  }

  private changed(change: KvChange): void {
    this.changes++;
    this.entries.delete(change.key);
  }
}
