import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { dependencyUnavailable } from '#bus';

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
  private readonly mine = new Map<string, IdempotencyRecord>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
    /** Whether the bus is connected: while NATS is away a key cannot be checked, so the request is a fast 503. */
    private readonly connected: () => boolean,
    private readonly onBackgroundError: (err: unknown) => void = () => undefined,
  ) {}

  async reserve(key: string, fingerprint: string): Promise<Reservation> {
    if (!this.connected()) throw dependencyUnavailable('NATS', 'check the Idempotency-Key');
    const reserved: IdempotencyRecord = { fingerprint, reservedAt: Date.now() };
    try {
      const reservation = await this.tryReserve(key, reserved);
      if (reservation.kind === 'new') this.mine.set(key, reserved);
      return reservation;
    } catch (err) {
      // The reservation may have been stored before the connection dropped: give it back once NATS is there again,
      // or the client's retry would find its own key "still running".
      this.inBackground(() => this.releaseIfMine(key, reserved));
      throw dependencyUnavailable('NATS', `check the Idempotency-Key (${String(err)})`);
    }
  }

  async complete(key: string, record: IdempotencyRecord): Promise<void> {
    this.mine.delete(key);
    try {
      await (await this.kv()).put(key, codec.encode(record));
    } catch (err) {
      // The change is made; keep trying to store its answer so that a retry gets it instead of "still running".
      this.inBackground(async () => void (await (await this.kv()).put(key, codec.encode(record))));
      throw err;
    }
  }

  async release(key: string): Promise<void> {
    const reserved = this.mine.get(key);
    this.mine.delete(key);
    if (!reserved) return;
    try {
      await this.releaseIfMine(key, reserved);
    } catch (err) {
      this.inBackground(() => this.releaseIfMine(key, reserved));
      throw err;
    }
  }

  /** Deletes the key only while it still holds this reservation (compare-and-set on its revision). */
  private async releaseIfMine(key: string, reserved: IdempotencyRecord): Promise<void> {
    const kv = await this.kv();
    const entry = await kv.get(key);
    if (!entry || entry.operation !== 'PUT') return;
    const held = codec.decode(entry.value);
    if (held.fingerprint !== reserved.fingerprint || held.reservedAt !== reserved.reservedAt || held.status !== undefined) return;
    await kv.delete(key, { previousSeq: entry.revision });
  }

  /** Retries `op` with backoff for up to RESERVATION_STALE_MS (after that the reservation is stale anyway). */
  private inBackground(op: () => Promise<void>): void {
    const until = Date.now() + RESERVATION_STALE_MS;
    const attempt = (delay: number) => {
      setTimeout(() => {
        op().catch((err: unknown) => {
          if (Date.now() < until) attempt(Math.min(delay * 2, 2_000));
          else this.onBackgroundError(err);
        });
      }, delay).unref();
    };
    attempt(250);
  }

  private async tryReserve(key: string, reserved: IdempotencyRecord, attempt = 0): Promise<Reservation> {
    const kv = await this.kv();
    const { fingerprint } = reserved;
    const now = reserved.reservedAt;
    try {
      await kv.create(key, codec.encode(reserved));
      return { kind: 'new' };
    } catch (err) {
      const entry = await kv.get(key);
      if (!entry || entry.operation !== 'PUT') {
        // Released between our create and get: try again, a few times (then the store's failure is the answer).
        if (attempt < 3) return this.tryReserve(key, reserved, attempt + 1);
        throw err;
      }
      const decision = decide(codec.decode(entry.value), fingerprint, now);
      if (decision !== 'stale') return decision;
      // Take over a reservation its gateway abandoned; a concurrent taker loses the compare-and-set.
      await kv.update(key, codec.encode(reserved), entry.revision);
      return { kind: 'new' };
    }
  }

  private kv(): Promise<KV> {
    this.bucket ??= new Kvm(this.nc).create(this.name, { ttl: IDEMPOTENCY_TTL_MS, history: 1 }).catch((err: unknown) => {
      this.bucket = undefined;
      throw err;
    });
    return this.bucket;
  }
}
