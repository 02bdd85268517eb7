import { randomUUID } from 'node:crypto';
import { dependencyUnavailable } from '#errors';
import { MemoryKvStore, type KvStore } from '#kv';
import { ReservationLease } from './idempotency-lease.js';

/** How long a key remembers its answer (a client retrying later than this makes a new request). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/**
 * How long a reservation stays its owner's without a sign of life: the gateway running the request renews it every
 * LEASE_RENEW_MS, so one still held after this was left by a gateway that died (or lost NATS) mid-request, and a retry
 * through another takes the key over — it runs again, and the services derive their ids from the key, so it creates
 * nothing twice. Gateways' clocks are assumed to agree within a second or so (NTP), as the lease is a time.
 */
export const RESERVATION_LEASE_MS = 8_000;
export const LEASE_RENEW_MS = 2_000;
/** How long a gateway keeps what it knows of a key whose write to the bucket has not landed (then it gives up). */
export const RESERVATION_STALE_MS = 3 * 60_000;

/** What a key holds: the fingerprint of the request that took it, and its answer once there is one. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly reservedAt: number;
  /** Which reservation wrote the entry (the distributed store's mark; absent in older entries). */
  readonly owner?: string;
  /** Until when the reservation is its owner's (renewed while its request runs); absent in older entries. */
  readonly leaseUntil?: number;
  readonly status?: number;
  readonly body?: unknown;
}

export type Reservation =
  | { readonly kind: 'new' }
  | { readonly kind: 'replay'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'mismatch' }
  /** Still running (its owner renews its lease): retry after `retryAfterSeconds` (1 or more). */
  | { readonly kind: 'in-progress'; readonly retryAfterSeconds: number };

/** Where Idempotency-Key answers live: shared by every gateway instance (NATS KV), or in the process when embedded. */
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
  const until = existing.leaseUntil ?? existing.reservedAt + RESERVATION_STALE_MS;
  if (now > until) return 'stale';
  // A live owner answers soon; a dead one's lease runs out by `until`: never send the client away for longer.
  const seconds = Math.ceil(Math.min(until - now, LEASE_RENEW_MS) / 1000);
  return { kind: 'in-progress', retryAfterSeconds: Math.max(1, seconds) };
}

const codec = {
  encode: (r: IdempotencyRecord) => JSON.stringify(r),
  decode: (text: string) => JSON.parse(text) as IdempotencyRecord,
};

/**
 * How long one step on the bucket (a reservation, an answer, a release) may take before the request goes on without
 * it: while JetStream elects a leader or recovers its streams, a bucket request can wait out its own timeout several
 * times, and the client must get a 503 it can retry rather than a request that hangs.
 */
export const KV_BUDGET_MS = 2_500;

export interface IdempotencyTiming {
  /** How long one step on the bucket may take (KV_BUDGET_MS). */
  readonly budgetMs: number;
  /** First delay of a background write's retries. */
  readonly retryFirstMs: number;
  /** A reservation's lease, and how often its gateway renews it (RESERVATION_LEASE_MS, LEASE_RENEW_MS). */
  readonly leaseMs: number;
  readonly renewMs: number;
}

const DEFAULT_TIMING: IdempotencyTiming = {
  budgetMs: KV_BUDGET_MS,
  retryFirstMs: 250,
  leaseMs: RESERVATION_LEASE_MS,
  renewMs: LEASE_RENEW_MS,
};

/** Resolves like `work`, or rejects once `ms` pass (the work goes on; its outcome is the caller's to settle). */
function withinBudget<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the Idempotency-Key bucket did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A reservation this gateway made: its owner mark tells it apart from any other of the same key and body. */
type Reserved = IdempotencyRecord & { readonly owner: string };
/** A reservation whose request runs here, with the lease that keeps it. */
type Held = Reserved & { readonly lease?: ReservationLease };

/**
 * A reservation this gateway gave up, or answered, whose write to the bucket has not landed yet: the gateway knows
 * what the bucket will say once it does, so a retry reaching it is not told "still running" meanwhile.
 */
interface Unsettled {
  /** The reservation's owner mark, as stored in the bucket. */
  readonly owner: string;
  /** The answer, when the request completed; absent when it was given up (its reservation may be taken over). */
  readonly answer?: IdempotencyRecord;
  readonly until: number;
}

/**
 * Idempotency-Key reservations and answers in a key-value bucket whose entries expire after IDEMPOTENCY_TTL_MS:
 * distributed, a NATS KV bucket every gateway shares; embedded, the process's memory. A create is a compare-and-set on
 * an absent key, so of two gateways that get the same key at once exactly one runs the request. Each reservation
 * carries an owner mark of its own; when a release or an answer cannot be written (NATS away, a bucket leader being
 * elected), the gateway keeps what it knows until the write lands in the background: a retry reaching it replays the
 * answer, or takes over the reservation it gave up, instead of finding its own key "still running" for minutes.
 */
export class KvIdempotencyStore implements IdempotencyStore {
  private readonly running = new Map<string, Held>();
  private readonly unsettled = new Map<string, Unsettled>();

  constructor(
    /** The bucket; each of its requests should wait at most the budget (not a connection's 5 s). */
    private readonly kv: KvStore,
    /** Whether the bus is connected: while NATS is away a key cannot be checked, so the request is a fast 503. */
    private readonly connected: () => boolean,
    private readonly onBackgroundError: (err: unknown) => void = () => undefined,
    private readonly timing: IdempotencyTiming = DEFAULT_TIMING,
  ) {}

  /** The embedded gateway's store: one process, so its memory is shared by every request it serves. */
  static inMemory(): KvIdempotencyStore {
    return new KvIdempotencyStore(new MemoryKvStore({ ttlMs: IDEMPOTENCY_TTL_MS }), () => true);
  }

  async reserve(key: string, fingerprint: string): Promise<Reservation> {
    const now = Date.now();
    this.forgetSettled(now);
    const answered = this.unsettled.get(key)?.answer;
    // An answer this gateway holds is the key's answer, whether or not NATS is there to confirm it.
    if (answered) return decide(answered, fingerprint, now) as Reservation;
    if (!this.connected()) throw dependencyUnavailable('NATS', 'check the Idempotency-Key');
    const leaseUntil = now + this.timing.leaseMs;
    const reserved: Reserved = { fingerprint, reservedAt: now, owner: randomUUID(), leaseUntil };
    const attempt = this.tryReserve(key, reserved);
    try {
      const { revision, ...reservation } = await withinBudget(attempt, this.timing.budgetMs);
      if (reservation.kind === 'new') {
        this.running.set(key, { ...reserved, lease: this.lease(key, reserved, revision!) });
      }
      return reservation as Reservation;
    } catch (err) {
      // The reservation may have been stored, or may still be: this request will not run, so it is given up.
      this.giveUp(key, reserved, attempt);
      throw dependencyUnavailable('NATS', `check the Idempotency-Key (${String(err)})`);
    }
  }

  async complete(key: string, record: IdempotencyRecord): Promise<void> {
    const held = this.running.get(key);
    held?.lease?.stop();
    const owner = held?.owner ?? randomUUID();
    this.running.delete(key);
    const answer: Reserved = { ...record, owner };
    const put = async () => void (await this.kv.put(key, codec.encode(answer)));
    try {
      await withinBudget(put(), this.timing.budgetMs);
    } catch (err) {
      // The change is made: a retry here gets its answer at once, and elsewhere once the background write lands.
      this.remember(key, { owner, answer });
      this.inBackground(key, put);
      throw err;
    }
  }

  async release(key: string): Promise<void> {
    const held = this.running.get(key);
    this.running.delete(key);
    if (!held) return;
    const { lease, ...reserved } = held;
    lease?.stop();
    try {
      await withinBudget(this.releaseIfMine(key, reserved), this.timing.budgetMs);
    } catch (err) {
      this.giveUp(key, reserved);
      throw err;
    }
  }

  /** Remembers `reserved` as given up, and deletes it from the bucket once `pending` has settled and NATS allows. */
  private giveUp(key: string, reserved: Reserved, pending?: Promise<unknown>): void {
    this.remember(key, { owner: reserved.owner });
    this.inBackground(key, async () => {
      await pending?.catch(() => undefined);
      await this.releaseIfMine(key, reserved);
    });
  }

  private remember(key: string, entry: Omit<Unsettled, 'until'>): void {
    // Delete first so that the map stays in expiry order.
    this.unsettled.delete(key);
    this.unsettled.set(key, { ...entry, until: Date.now() + RESERVATION_STALE_MS });
  }

  private forgetSettled(now: number): void {
    for (const [key, entry] of this.unsettled) {
      if (entry.until > now) break;
      this.unsettled.delete(key);
    }
  }

  /** Deletes the key only while it still holds this reservation (compare-and-set on its revision). */
  private async releaseIfMine(key: string, reserved: Reserved): Promise<void> {
    const entry = await this.kv.get(key);
    if (!entry) return;
    const held = codec.decode(entry.value);
    const same =
      held.fingerprint === reserved.fingerprint &&
      held.reservedAt === reserved.reservedAt &&
      held.owner === reserved.owner;
    if (!same || held.status !== undefined) return;
    await this.kv.delete(key, { expected: entry.revision });
  }

  /**
   * Retries `op` with backoff for up to RESERVATION_STALE_MS (after that the reservation is stale anyway); once it
   * lands, the bucket says what the gateway knew, and the key's local entry is dropped.
   */
  private inBackground(key: string, op: () => Promise<void>): void {
    const owner = this.unsettled.get(key)?.owner;
    const until = Date.now() + RESERVATION_STALE_MS;
    const attempt = (delay: number) => {
      setTimeout(() => {
        op().then(
          () => {
            if (this.unsettled.get(key)?.owner === owner) this.unsettled.delete(key);
          },
          (err: unknown) => {
            if (Date.now() < until) attempt(Math.min(delay * 2, 2_000));
            else this.onBackgroundError(err);
          },
        );
      }, delay).unref();
    };
    attempt(this.timing.retryFirstMs);
  }

  /** Renews the reservation's lease in the bucket while its request runs here. */
  private lease(key: string, reserved: Reserved, revision: number): ReservationLease {
    const { leaseMs, renewMs } = this.timing;
    const write = (leaseUntil: number) => codec.encode({ ...reserved, leaseUntil });
    return new ReservationLease(this.kv, key, write, revision, leaseMs, renewMs);
  }

  private async tryReserve(key: string, reserved: Reserved, attempt = 0): Promise<Reservation & { revision?: number }> {
    const { fingerprint } = reserved;
    const now = reserved.reservedAt;
    try {
      return { kind: 'new', revision: await this.kv.put(key, codec.encode(reserved), { expected: 0 }) };
    } catch (err) {
      const entry = await this.kv.get(key);
      if (!entry) {
        // Released between our create and get: try again, a few times (then the store's failure is the answer).
        if (attempt < 3) return this.tryReserve(key, reserved, attempt + 1);
        throw err;
      }
      const held = codec.decode(entry.value);
      const decision = decide(held, fingerprint, now);
      const gaveUp =
        decision !== 'stale' &&
        decision.kind === 'in-progress' &&
        held.owner !== undefined &&
        this.unsettled.get(key)?.owner === held.owner;
      if (decision !== 'stale' && !gaveUp) return decision;
      // Take over a reservation its gateway abandoned (this one, or one whose lease ran out: its gateway died or lost
      // NATS); a concurrent taker loses the compare-and-set.
      return { kind: 'new', revision: await this.kv.put(key, codec.encode(reserved), { expected: entry.revision }) };
    }
  }
}
