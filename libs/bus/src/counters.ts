import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { lazyKvBucket } from './kv-bucket.js';
import type { Bus } from './bus.js';
import { NatsBus } from './nats.bus.js';

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
  delete(keys: readonly string[]): Promise<void>;
  /** Drops every key that starts with `counterKey(...segments)`. */
  deletePrefix(...segments: string[]): Promise<void>;
}

/** A KV-safe key from free-form segments (each base64url-encoded, joined by dots). */
export function counterKey(...segments: string[]): string {
  return segments.map((s) => Buffer.from(s, 'utf8').toString('base64url') || '_').join('.');
}

const MAX_CAS_ATTEMPTS = 64;
const encode = (v: CounterValues) => new TextEncoder().encode(JSON.stringify(v));
const decode = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data)) as CounterValues;

function sum(base: CounterValues, deltas: CounterValues): CounterValues {
  const out: CounterValues = { ...base };
  for (const [k, d] of Object.entries(deltas)) out[k] = (out[k] ?? 0) + d;
  return out;
}

/** A lost compare-and-set (another instance wrote the key since it was read): read again and retry. */
function isCasConflict(err: unknown): boolean {
  return /wrong last sequence|key exists/i.test(String((err as Error)?.message ?? err));
}

/**
 * Counters in a JetStream KV bucket (history 1): each add reads the entry and writes the new totals only if the entry's
 * revision has not moved (compare-and-set), retrying on a lost race, so no instance's increment overwrites another's.
 */
export class NatsKvCounters implements Counters {
  /** The bucket, opened on first use. */
  private readonly kv: () => Promise<KV>;

  constructor(
    nc: NatsConnection,
    name: string,
    /** Copies of the bucket (ALFRED_STREAM_REPLICAS, as every stream and bucket). */
    replicas = 1,
  ) {
    this.kv = lazyKvBucket(nc, name, { history: 1, replicas });
  }

  async add(key: string, deltas: CounterValues, seed?: () => Promise<CounterValues | undefined>): Promise<CounterValues> {
    const kv = await this.kv();
    for (let attempt = 1; ; attempt++) {
      const entry = await kv.get(key);
      const live = entry !== null && entry.operation === 'PUT';
      const next = sum(live ? decode(entry.value) : ((await seed?.()) ?? {}), deltas);
      try {
        if (live) await kv.update(key, encode(next), entry.revision);
        else await kv.create(key, encode(next));
        return next;
      } catch (err) {
        if (!isCasConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
      }
    }
  }

  async get(keys: readonly string[]): Promise<Map<string, CounterValues>> {
    const kv = await this.kv();
    const entries = await Promise.all([...new Set(keys)].map(async (key) => [key, await kv.get(key)] as const));
    return new Map(entries.flatMap(([key, e]) => (e && e.operation === 'PUT' ? [[key, decode(e.value)] as const] : [])));
  }

  async delete(keys: readonly string[]): Promise<void> {
    const kv = await this.kv();
    await Promise.all(keys.map((key) => kv.purge(key)));
  }

  async deletePrefix(...segments: string[]): Promise<void> {
    const kv = await this.kv();
    const keys: string[] = [];
    for await (const key of await kv.keys(`${counterKey(...segments)}.>`)) keys.push(key);
    await this.delete(keys);
  }
}

/**
 * The counters every instance of a service shares: distributed, the `ALFRED_COUNTERS` KV bucket (with the bus's
 * stream replicas); embedded (one process) none, and the caller keeps its counts in its own rows.
 */
export function sharedCounters(bus: Bus): Counters | undefined {
  return bus instanceof NatsBus ? new NatsKvCounters(bus.nc, bus.stream('ALFRED_COUNTERS'), bus.replicas) : undefined;
}

/**
 * Adds `deltas` to shared counters whose totals are also kept in a store's row (`mirror`): the count stands only once
 * mirrored, so a mirror that fails takes the deltas back and rethrows — the caller's error, nothing counted, and a
 * retry of the same report counts once.
 */
export async function addMirrored(
  counters: Counters,
  key: string,
  deltas: CounterValues,
  seed: () => Promise<CounterValues | undefined>,
  mirror: (totals: CounterValues) => Promise<void>,
): Promise<CounterValues> {
  const totals = await counters.add(key, deltas, seed);
  try {
    await mirror(totals);
  } catch (err) {
    const back = Object.fromEntries(Object.entries(deltas).map(([k, d]) => [k, -d]));
    await counters.add(key, back).catch(() => undefined);
    throw err;
  }
  return totals;
}
