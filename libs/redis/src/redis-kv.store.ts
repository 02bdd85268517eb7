import type { Redis } from 'ioredis';
import {
  checkKey,
  checkPrefix,
  KvConflictError,
  type KvBucketOptions,
  type KvChange,
  type KvEntry,
  type KvStore,
  type KvWatch,
  type KvWriteOptions,
} from '#kv';
import { createRedis } from './redis-client.js';
import * as lua from './redis-kv.scripts.js';

export interface RedisKvOptions extends KvBucketOptions {
  /** Prefix of every key (ALFRED_REDIS_PREFIX; a unique one per test). */
  readonly keyPrefix?: string;
}

/**
 * A bucket in Redis: one hash per key (`<prefix>kv:<bucket>:<key>`: value and revision) written by Lua scripts that
 * compare and set in one step, a sorted set of the bucket's keys for listing by prefix (lexicographic range), and a
 * pub/sub channel that each write names its key on, for watches. A bucket TTL is each key's expiry; a sorted set of
 * the keys by expiry lets writes drop expired keys from the index as they go.
 */
export class RedisKvStore implements KvStore {
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly base: string;
  private readonly index: string;
  private readonly expiry: string;
  private readonly channel: string;

  constructor(
    /** A connection URL (the store owns and closes its connection) or a client (the caller closes it). */
    redis: string | Redis,
    bucket: string,
    private readonly options: RedisKvOptions = {},
  ) {
    this.owned = typeof redis === 'string';
    this.redis = typeof redis === 'string' ? createRedis(redis, `kv ${bucket}`) : redis;
    const prefix = options.keyPrefix ?? 'alfred:';
    this.base = `${prefix}kv:${bucket}:`;
    this.index = `${prefix}kv-index:${bucket}`;
    this.expiry = `${prefix}kv-expiry:${bucket}`;
    this.channel = `${prefix}kv-changes:${bucket}`;
  }

  async get(key: string): Promise<KvEntry | undefined> {
    checkKey(key);
    const [value, revision] = await this.redis.hmget(this.base + key, 'v', 'r');
    return value === null || revision === null ? undefined : { key, value, revision: Number(revision) };
  }

  async put(key: string, value: string, options: KvWriteOptions = {}): Promise<number> {
    checkKey(key);
    const args = [key, value, options.expected ?? '', this.options.ttlMs ?? '', this.channel, this.base];
    const keys = [this.base + key, this.index, this.expiry];
    const [revision, actual] = (await this.redis.eval(lua.PUT, 3, ...keys, ...args)) as [string | number, string?];
    if (Number(revision) === -1) throw new KvConflictError(key, options.expected!, Number(actual));
    return Number(revision);
  }

  async delete(key: string, options: KvWriteOptions = {}): Promise<boolean> {
    checkKey(key);
    const args = [key, options.expected ?? '', this.channel];
    const keys = [this.base + key, this.index, this.expiry];
    const [done, actual] = (await this.redis.eval(lua.DELETE, 3, ...keys, ...args)) as [number, string?];
    if (done === -1) throw new KvConflictError(key, options.expected!, Number(actual));
    return done === 1;
  }

  async keys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((e) => e.key);
  }

  async list(prefix: string): Promise<KvEntry[]> {
    checkPrefix(prefix);
    const [from, to] = prefix === '' ? ['-', '+'] : [`[${prefix}`, `[${prefix}\xff`];
    const keys = await this.redis.zrangebylex(this.index, from, to);
    if (keys.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const key of keys) pipe.hmget(this.base + key, 'v', 'r');
    const rows = (await pipe.exec()) ?? [];
    const entries: KvEntry[] = [];
    const expired: string[] = [];
    keys.forEach((key, i) => {
      const [err, pair] = rows[i] ?? [];
      if (err) throw err;
      const [value, revision] = pair as [string | null, string | null];
      if (value === null || revision === null) expired.push(key);
      else entries.push({ key, value, revision: Number(revision) });
    });
    // Keys whose entry expired stay in the index until a listing finds them gone (a later write re-adds them).
    if (expired.length > 0) await this.dropExpired(expired);
    return entries;
  }

  async watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch> {
    checkPrefix(prefix);
    const sub = this.redis.duplicate();
    // One change at a time, so a key's changes are told in the order they were made.
    let queue = Promise.resolve();
    sub.on('message', (_channel: string, key: string) => {
      if (!key.startsWith(prefix)) return;
      queue = queue.then(async () => {
        try {
          onChange({ key, entry: await this.get(key) });
        } catch {
          // A watcher's failure (or a read that failed) must not stop the watch; the next change reads again.
        }
      });
    });
    await sub.subscribe(this.channel);
    return {
      stop: async () => {
        await sub.unsubscribe(this.channel).catch(() => undefined);
        sub.disconnect();
      },
    };
  }

  async close(): Promise<void> {
    if (this.owned) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** Removes index entries whose key expired, unless it was written again meanwhile. */
  private async dropExpired(keys: readonly string[]): Promise<void> {
    const script = `for i, k in ipairs(ARGV) do
      if redis.call('EXISTS', KEYS[1] .. k) == 0 then redis.call('ZREM', KEYS[2], k) end
    end`;
    await this.redis.eval(script, 2, this.base, this.index, ...keys).catch(() => undefined);
  }
}
