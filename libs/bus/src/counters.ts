import { join } from 'node:path';
import { FileKvStore } from '#files';
import { isKvConflict, type KvStore } from '#kv';
import type { Bus } from './bus.js';
import { NatsBus } from './nats.bus.js';
import { NatsKvStore } from './nats-kv.store.js';

/** Named integer counters under one key, e.g. `{ helpful: 3, unhelpful: 1 }`. */
export type CounterValues = Record<string, number>;

/**
 * Counters that every instance of a service shares, incremented atomically: two instances adding at once both count.
 * Keys are built with {@link counterKey}, so a scope's counters can be dropped together by their prefix.
 */
export interface Counters {
  /**
   * Adds `deltas` to the key's counters and returns the totals after. `seed` gives the starting totals of a key
   * never counted here (counts kept elsewhere before); it is read only when the key is new.
   */
  add(key: string, deltas: CounterValues, seed?: () => Promise<CounterValues | undefined>): Promise<CounterValues>;
  get(keys: readonly string[]): Promise<Map<string, CounterValues>>;
  /** Every key that starts with `counterKey(...segments)`, with its totals. */
  list(...segments: string[]): Promise<Map<string, CounterValues>>;
  delete(keys: readonly string[]): Promise<void>;
  /** Drops every key that starts with `counterKey(...segments)`. */
  deletePrefix(...segments: string[]): Promise<void>;
}

/** A KV-safe key from free-form segments (each base64url-encoded, joined by dots). */
export function counterKey(...segments: string[]): string {
  return segments.map((s) => Buffer.from(s, 'utf8').toString('base64url') || '_').join('.');
}

const MAX_CAS_ATTEMPTS = 64;
const decode = (value: string) => JSON.parse(value) as CounterValues;

function sum(base: CounterValues, deltas: CounterValues): CounterValues {
  const out: CounterValues = { ...base };
  for (const [k, d] of Object.entries(deltas)) out[k] = (out[k] ?? 0) + d;
  return out;
}

/**
 * Counters in a key-value bucket: each add reads the entry and writes the new totals only if its revision has not
 * moved (compare-and-set), retrying on a lost race, so no instance's increment overwrites another's.
 */
export class KvCounters implements Counters {
  constructor(private readonly kv: KvStore) {}

  async add(
    key: string,
    deltas: CounterValues,
    seed?: () => Promise<CounterValues | undefined>,
  ): Promise<CounterValues> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.kv.get(key);
      const next = sum(entry ? decode(entry.value) : ((await seed?.()) ?? {}), deltas);
      try {
        await this.kv.put(key, JSON.stringify(next), { expected: entry?.revision ?? 0 });
        return next;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
      }
    }
  }

  async get(keys: readonly string[]): Promise<Map<string, CounterValues>> {
    const entries = await Promise.all([...new Set(keys)].map(async (key) => [key, await this.kv.get(key)] as const));
    return new Map(entries.flatMap(([key, e]) => (e ? [[key, decode(e.value)] as const] : [])));
  }

  async list(...segments: string[]): Promise<Map<string, CounterValues>> {
    return new Map((await this.kv.list(`${counterKey(...segments)}.`)).map((e) => [e.key, decode(e.value)] as const));
  }

  async delete(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.kv.delete(key)));
  }

  async deletePrefix(...segments: string[]): Promise<void> {
    await this.delete(await this.kv.keys(`${counterKey(...segments)}.`));
  }
}

/**
 * The counters every instance of a service shares: distributed, the `ALFRED_COUNTERS` KV bucket (with the bus's
 * stream replicas); embedded (one process) none.
 */
export function sharedCounters(bus: Bus): Counters | undefined {
  if (!(bus instanceof NatsBus)) return undefined;
  return new KvCounters(new NatsKvStore(bus.nc, bus.stream('ALFRED_COUNTERS'), { replicas: bus.replicas }));
}

/** A service's counters: the shared bucket when distributed, else files under `<dataDir>/kv/counters` (embedded). */
export function serviceCounters(bus: Bus, dataDir: string): Counters {
  return sharedCounters(bus) ?? new KvCounters(new FileKvStore(join(dataDir, 'kv', 'counters')));
}
