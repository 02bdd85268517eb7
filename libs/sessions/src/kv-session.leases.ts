import type { Scope } from '#contracts';
import { AlfredError } from '#errors';
import { isKvConflict, type KvStore } from '#kv';
import { leaseKey, sessionKey } from './kv-session.keys.js';
import type { SessionLease } from './session-store.js';

/** A stored lease: its holder and token, and until when it holds (the holders' clocks, kept in step by NTP). */
interface StoredLease extends SessionLease {
  readonly expiresAt: number;
}

const MAX_ATTEMPTS = 100;

/**
 * Session leases on the key-value port. A lease is a key of its own (renewing it rewrites a few bytes, not the
 * session); the session's record keeps the newest token handed out (`fence`), which every fenced write of the session
 * is compared with in the same compare-and-set as the write. A new holder's token is above both the record's fence and
 * the last lease's token, so a holder that stopped between writing its lease and raising the fence gives no token
 * twice.
 */
export class KvSessionLeases {
  constructor(
    /** The sessions' records (their fence). */
    private readonly kv: KvStore,
    /**
     * Where the leases are: the same store distributed; the process's memory embedded (a lease ends with its process).
     */
    private readonly leases: KvStore = kv,
  ) {}

  async acquire(scope: Scope, id: string, owner: string, ttlMs: number): Promise<SessionLease | undefined> {
    const key = leaseKey(scope, id);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const entry = await this.leases.get(key);
      const held = entry && (JSON.parse(entry.value) as StoredLease);
      const live = held !== undefined && held.expiresAt > Date.now();
      if (live && held.owner !== owner) return undefined;
      const session = await this.kv.get(sessionKey(scope, id));
      if (!session) throw AlfredError.notFound('session', id);
      const fence = (JSON.parse(session.value) as { fence?: number }).fence ?? 0;
      const token = live ? held.token : Math.max(fence, held?.token ?? 0) + 1;
      const lease: StoredLease = { owner, token, expiresAt: Date.now() + ttlMs };
      try {
        await this.leases.put(key, JSON.stringify(lease), { expected: entry?.revision ?? 0 });
      } catch (err) {
        if (isKvConflict(err)) continue;
        throw err;
      }
      if (!live) await this.raiseFence(scope, id, token);
      return { owner, token };
    }
    throw new Error(`the lease of session ${id} changed ${MAX_ATTEMPTS} times while being acquired`);
  }

  async renew(scope: Scope, id: string, owner: string, ttlMs: number): Promise<boolean> {
    const key = leaseKey(scope, id);
    const entry = await this.leases.get(key);
    const held = entry && (JSON.parse(entry.value) as StoredLease);
    if (!entry || !held || held.owner !== owner || held.expiresAt <= Date.now()) return false;
    try {
      await this.leases.put(key, JSON.stringify({ ...held, expiresAt: Date.now() + ttlMs }), {
        expected: entry.revision,
      });
      return true;
    } catch (err) {
      // Another owner took it over meanwhile (it had lapsed): not ours to renew any more.
      if (isKvConflict(err)) return false;
      throw err;
    }
  }

  async release(scope: Scope, id: string, owner: string): Promise<boolean> {
    const key = leaseKey(scope, id);
    const entry = await this.leases.get(key);
    const held = entry && (JSON.parse(entry.value) as StoredLease);
    if (!entry || !held || held.owner !== owner || held.expiresAt <= Date.now()) return false;
    try {
      return await this.leases.delete(key, { expected: entry.revision });
    } catch (err) {
      if (isKvConflict(err)) return false;
      throw err;
    }
  }

  /** Deletes the session's lease (with the session). */
  async forget(scope: Scope, id: string): Promise<void> {
    await this.leases.delete(leaseKey(scope, id));
  }

  /** Raises the session's fence to `token` (compare-and-set), so from now on older tokens' writes are refused. */
  private async raiseFence(scope: Scope, id: string, token: number): Promise<void> {
    const key = sessionKey(scope, id);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const entry = await this.kv.get(key);
      if (!entry) throw AlfredError.notFound('session', id);
      const record = JSON.parse(entry.value) as { fence?: number };
      if ((record.fence ?? 0) >= token) return;
      try {
        await this.kv.put(key, JSON.stringify({ ...record, fence: token }), { expected: entry.revision });
        return;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new Error(`session ${id} changed ${MAX_ATTEMPTS} times while its fence was raised`);
  }
}
