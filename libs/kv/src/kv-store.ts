/** One stored value with the revision it was written at. */
export interface KvEntry {
  readonly key: string;
  readonly value: string;
  /**
   * Grows with every write of the key, and never comes back after a delete (a key deleted and written again gets a
   * higher revision than any it had): a compare-and-set against an old revision can never succeed by coincidence.
   */
  readonly revision: number;
}

export interface KvWriteOptions {
  /**
   * Compare-and-set: the write lands only while the key's revision is this one (0: only while the key holds no
   * value), else {@link KvConflictError} and nothing changes.
   */
  readonly expected?: number;
}

/** A change seen by a watch: the key and its entry as read when delivered (undefined: deleted or expired). */
export interface KvChange {
  readonly key: string;
  readonly entry: KvEntry | undefined;
}

export interface KvWatch {
  stop(): Promise<void>;
}

/**
 * Keys and values every instance that shares the store sees alike: one bucket of a NATS KV, Redis or the data dir.
 * Keys are dot-separated tokens of letters, digits, `-`, `_`, `=` and `/` (NATS KV's alphabet, so a dataset runs
 * unchanged on every adapter); {@link keyToken} makes a token of any string. Values are text (JSON, as a rule).
 */
export interface KvStore {
  /** The key's value, or undefined when it has none (never written, deleted, or expired with the bucket's TTL). */
  get(key: string): Promise<KvEntry | undefined>;
  /** Writes the value (compare-and-set with `expected`); returns the new revision. */
  put(key: string, value: string, options?: KvWriteOptions): Promise<number>;
  /** Deletes the value (compare-and-set with `expected`); true when the key held one. */
  delete(key: string, options?: KvWriteOptions): Promise<boolean>;
  /** Keys under `prefix` (empty, or whole tokens ending with `.`), in key order. */
  keys(prefix: string): Promise<string[]>;
  /** Entries under `prefix` (as for `keys`), in key order. */
  list(prefix: string): Promise<KvEntry[]>;
  /**
   * Calls `onChange` for every change under `prefix` after the watch started, from any instance, in order per key.
   * Delivery is best effort across outages of the server (re-read what matters after one).
   */
  watch(prefix: string, onChange: (change: KvChange) => void): Promise<KvWatch>;
  close(): Promise<void>;
}

/** How a bucket is opened: every adapter takes these. */
export interface KvBucketOptions {
  /** Entries expire this long after their last write (none when absent). */
  readonly ttlMs?: number;
}

/** A compare-and-set that lost: the key's revision was not the expected one. Read again and retry, or give up. */
export class KvConflictError extends Error {
  constructor(
    readonly key: string,
    readonly expected: number,
    /** The revision found, where the adapter knows it. */
    readonly actual?: number,
  ) {
    super(`key ${key} is not at revision ${expected}${actual === undefined ? '' : ` (it is at ${actual})`}`);
    this.name = 'KvConflictError';
  }
}

export const isKvConflict = (err: unknown): err is KvConflictError => err instanceof KvConflictError;

/** A key or prefix outside the port's alphabet: a programming error of the dataset, never the client's. */
export class KvKeyError extends Error {
  constructor(key: string, why: string) {
    super(`invalid key-value key ${JSON.stringify(key)}: ${why}`);
    this.name = 'KvKeyError';
  }
}
