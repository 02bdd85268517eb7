import { KvWatchInclude, type KV, type KvEntry as NatsKvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
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
import { lazyKvBucket } from './kv-bucket.js';

export interface NatsKvOptions extends KvBucketOptions {
  /** Copies of the bucket on a cluster (ALFRED_STREAM_REPLICAS, as every stream and bucket). */
  readonly replicas?: number;
  /** How long one request to the bucket may take (default: the connection's 5 s). */
  readonly timeoutMs?: number;
}

const decoder = new TextDecoder();
const live = (e: NatsKvEntry | null): e is NatsKvEntry => e !== null && e.operation === 'PUT';
const toEntry = (e: NatsKvEntry): KvEntry => ({ key: e.key, value: decoder.decode(e.value), revision: e.revision });
/** JetStream's answer to a write whose expected last sequence of the key did not hold. */
const isCasConflict = (err: unknown) => /wrong last sequence|key exists/i.test(String((err as Error)?.message ?? err));
const MAX_DELETE_ATTEMPTS = 20;

/**
 * A JetStream KV bucket (history 1), opened (or created) on first use: a revision is the stream sequence of the key's
 * last write, so it grows with every write of the bucket and a deleted key's revisions never come back. Every
 * instance over NATS shares it; the bucket's TTL is its streams' max age.
 */
export class NatsKvStore implements KvStore {
  private readonly kv: () => Promise<KV>;

  constructor(nc: NatsConnection, bucket: string, options: NatsKvOptions = {}) {
    const ttl = options.ttlMs === undefined ? {} : { ttl: options.ttlMs };
    const config = { history: 1, replicas: options.replicas ?? 1, ...ttl };
    this.kv = lazyKvBucket(nc, bucket, config, options.timeoutMs);
  }

  async get(key: string): Promise<KvEntry | undefined> {
    checkKey(key);
    const entry = await (await this.kv()).get(key);
    return live(entry) ? toEntry(entry) : undefined;
  }

  async put(key: string, value: string, options: KvWriteOptions = {}): Promise<number> {
    checkKey(key);
    const kv = await this.kv();
    const { expected } = options;
    try {
      if (expected === undefined) return await kv.put(key, value);
      return expected === 0 ? await kv.create(key, value) : await kv.update(key, value, expected);
    } catch (err) {
      if (expected !== undefined && isCasConflict(err)) throw new KvConflictError(key, expected);
      throw err;
    }
  }

  async delete(key: string, options: KvWriteOptions = {}): Promise<boolean> {
    checkKey(key);
    const kv = await this.kv();
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      const revision = live(entry) ? entry.revision : 0;
      if (options.expected !== undefined && options.expected !== revision) {
        throw new KvConflictError(key, options.expected, revision);
      }
      if (revision === 0) return false;
      try {
        // On the revision just read: a write in between is not deleted unseen (the delete is tried on the newer one).
        await kv.delete(key, { previousSeq: revision });
        return true;
      } catch (err) {
        if (!isCasConflict(err) || attempt >= MAX_DELETE_ATTEMPTS) throw err;
      }
    }
  }

  async keys(prefix: string): Promise<string[]> {
    checkPrefix(prefix);
    const keys: string[] = [];
    for await (const key of await (await this.kv()).keys(`${prefix}>`)) keys.push(key);
    return keys.sort();
  }

  async list(prefix: string): Promise<KvEntry[]> {
    const kv = await this.kv();
    const entries = await Promise.all((await this.keys(prefix)).map((key) => kv.get(key)));
    return entries.filter(live).map(toEntry);
  }

  async watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch> {
    checkPrefix(prefix);
    const iter = await (await this.kv()).watch({ key: `${prefix}>`, include: KvWatchInclude.UpdatesOnly });
    const done = (async () => {
      for await (const e of iter) {
        try {
          onChange({ key: e.key, entry: live(e) ? toEntry(e) : undefined });
        } catch {
          // A watcher's failure must not stop the watch.
        }
      }
    })();
    return {
      stop: async () => {
        iter.stop();
        await done.catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {}
}
