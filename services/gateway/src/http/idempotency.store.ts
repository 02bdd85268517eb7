import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a key remembers its answer (a client retrying later than this makes a new request). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/** A reservation older than this was left by a gateway that died mid-request: another may take the key over. */
export const RESERVATION_STALE_MS = 3 * 60_000;

/** What a key holds: the fingerprint of the request that took it, and its answer once there is one. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly reservedAt: number;
  readonly status?: number;
  readonly body?: unknown;
}

export type Reservation =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in-progress' };

/** Where Idempotency-Key answers live: shared by every gateway instance (NATS KV), or in-process when embedded. */
export interface IdempotencyStore {
  /** Takes the key for this request, or says why not (its answer to replay, another body, still running). */
  reserve(key: string, fingerprint: string): Promise<Reservation>;
  /** Keeps the answer of the request that holds the key. */
  complete(key: string, record: IdempotencyRecord): Promise<void>;
  /** Gives the key up (the request failed): a retry with it runs again. */
  release(key: string): Promise<void>;
}

function decide(existing: IdempotencyRecord, fingerprint: string, now: number): Reservation | 'stale' {
  if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (existing.status !== undefined) return { kind: 'replay', status: existing.status, body: existing.body };
  return now - existing.reservedAt > RESERVATION_STALE_MS ? 'stale' : { kind: 'in-progress' };
}

/** The embedded gateway's store: one process, so a map with expiry is shared by every request it serves. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();

  async reserve(key: string, fingerprint: string): Promise<Reservation> {
    const now = Date.now();
    this.expire(now);
    const existing = this.records.get(key);
    if (existing) {
      const decision = decide(existing, fingerprint, now);
      if (decision !== 'stale') return decision;
    }
    this.records.set(key, { fingerprint, reservedAt: now });
    return { kind: 'new' };
  }

  async complete(key: string, record: IdempotencyRecord): Promise<void> {
    this.records.set(key, record);
  }

  async release(key: string): Promise<void> {
    this.records.delete(key);
  }

  private expire(now: number): void {
    for (const [key, r] of this.records) {
      if (now - r.reservedAt < IDEMPOTENCY_TTL_MS) break;
      this.records.delete(key);
    }
  }
}

const codec = {
  encode: (r: IdempotencyRecord) => new TextEncoder().encode(JSON.stringify(r)),
  decode: (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data)) as IdempotencyRecord,
};

/**
 * The distributed store: a JetStream KV bucket (entries expire after IDEMPOTENCY_TTL_MS). `create` is atomic, so
 * of two gateways that get the same key at once exactly one runs the request.
 */
export class NatsKvIdempotencyStore implements IdempotencyStore {
  private bucket?: Promise<KV>;

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
  ) {}

  async reserve(key: string, fingerprint: string, attempt = 0): Promise<Reservation> {
    const kv = await this.kv();
    const now = Date.now();
    try {
      await kv.create(key, codec.encode({ fingerprint, reservedAt: now }));
      return { kind: 'new' };
    } catch (err) {
      const entry = await kv.get(key);
      if (!entry || entry.operation !== 'PUT') {
        // Released between our create and get: try again, a few times (then the store's failure is the answer).
        if (attempt < 3) return this.reserve(key, fingerprint, attempt + 1);
        throw err;
      }
      const decision = decide(codec.decode(entry.value), fingerprint, now);
      if (decision !== 'stale') return decision;
      // Take over a reservation its gateway abandoned; a concurrent taker loses the compare-and-set.
      await kv.update(key, codec.encode({ fingerprint, reservedAt: now }), entry.revision);
      return { kind: 'new' };
    }
  }

  async complete(key: string, record: IdempotencyRecord): Promise<void> {
    await (await this.kv()).put(key, codec.encode(record));
  }

  async release(key: string): Promise<void> {
    await (await this.kv()).delete(key);
  }

  private kv(): Promise<KV> {
    this.bucket ??= new Kvm(this.nc).create(this.name, { ttl: IDEMPOTENCY_TTL_MS, history: 1 }).catch((err: unknown) => {
      this.bucket = undefined;
      throw err;
    });
    return this.bucket;
  }
}
