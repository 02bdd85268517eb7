import { createHash } from 'node:crypto';
import { dependencyUnavailable } from '#errors';
import { isKvConflict, MemoryKvStore, type KvStore } from '#kv';

/** What ends a credential before its expiry: its own turn, or everything minted for a session or agent until then. */
export type Revocation =
  | { readonly kind: 'turn'; readonly id: string }
  | { readonly kind: 'session'; readonly tenant: string; readonly session: string }
  | { readonly kind: 'agent'; readonly tenant: string; readonly agent: string };

/** The revocations that may concern one credential (its own, its session's, its agent's). */
export interface RevocationQuery {
  readonly id: string;
  readonly tenant: string;
  readonly session: string;
  readonly agent: string;
  /** When the credential was minted (ms): a session or agent revoked later than this ends it. */
  readonly iat: number;
  /** When it expires (ms). */
  readonly exp: number;
}

/**
 * Where revocations live until the credentials they end have expired: shared by every gateway instance (a NATS KV
 * bucket) or in the process when embedded, so a credential revoked through one gateway is refused by all.
 */
export interface CredentialRevocations {
  /** Records the revocation; `at` is its time (ms), `until` when what it ends has expired anyway. */
  revoke(revocation: Revocation, at: number, until: number): Promise<void>;
  isRevoked(query: RevocationQuery): Promise<boolean>;
}

const hash = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 43);

/** One KV-safe key per revocation: a digest, so tenants, sessions and agents of any spelling fit. */
export function revocationKey(r: Revocation): string {
  if (r.kind === 'turn') return `t.${hash(r.id)}`;
  if (r.kind === 'session') return `s.${hash(r.tenant, r.session)}`;
  return `a.${hash(r.tenant, r.agent)}`;
}

const keysOf = (q: RevocationQuery) => ({
  turn: revocationKey({ kind: 'turn', id: q.id }),
  scopes: [
    revocationKey({ kind: 'session', tenant: q.tenant, session: q.session }),
    revocationKey({ kind: 'agent', tenant: q.tenant, agent: q.agent }),
  ],
});

const MAX_CAS_ATTEMPTS = 20;

export interface KvRevocationsOptions {
  /** Whether the store can be reached now (the bus's connection): while it cannot, a check is a fast 503. */
  readonly connected?: () => boolean;
  /** What the store is, in the 503 (default NATS). */
  readonly dependency?: string;
}

/**
 * Revocations in a key-value bucket whose entries expire after the credentials' TTL (nothing it could still end
 * outlives that): distributed, a NATS KV bucket every gateway instance checks; embedded, the process's memory. A turn's
 * revocation is a key of its own; a session's or agent's holds the time it was revoked (the latest of its
 * revocations), and ends every credential minted before. Each check reads the bucket (a revocation made through another
 * gateway counts at once); what this instance found revoked is remembered until it expires. While the store is away a
 * credential cannot be checked, so its request is a fast 503, never accepted unchecked.
 */
export class KvCredentialRevocations implements CredentialRevocations {
  private readonly known = new Map<string, number>();

  constructor(
    private readonly kv: KvStore,
    private readonly options: KvRevocationsOptions = {},
  ) {}

  async revoke(revocation: Revocation, at: number, until: number): Promise<void> {
    const key = revocationKey(revocation);
    if (revocation.kind === 'turn') this.remember(key, until);
    await this.reach('record a credential revocation', async () => {
      for (let attempt = 1; ; attempt++) {
        const entry = await this.kv.get(key);
        const latest = Math.max(at, entry ? Number(entry.value) : 0);
        try {
          await this.kv.put(key, String(latest), { expected: entry?.revision ?? 0 });
          return;
        } catch (err) {
          if (!isKvConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
        }
      }
    });
  }

  async isRevoked(q: RevocationQuery): Promise<boolean> {
    const { turn, scopes } = keysOf(q);
    if (this.known.has(turn)) return true;
    const entries = await this.reach('check the credential', () =>
      Promise.all([turn, ...scopes].map((k) => this.kv.get(k))),
    );
    const times = entries.map((e) => (e ? Number(e.value) : undefined));
    const revoked = times[0] !== undefined || times.slice(1).some((at) => at !== undefined && at >= q.iat);
    if (revoked) this.remember(turn, q.exp);
    return revoked;
  }

  private remember(key: string, until: number): void {
    this.known.set(key, until);
    const now = Date.now();
    for (const [k, u] of this.known) if (u <= now) this.known.delete(k);
  }

  private async reach<T>(what: string, op: () => Promise<T>): Promise<T> {
    const dependency = this.options.dependency ?? 'NATS';
    if (this.options.connected && !this.options.connected()) throw dependencyUnavailable(dependency, what);
    try {
      return await op();
    } catch (err) {
      throw dependencyUnavailable(dependency, `${what} (${String(err)})`);
    }
  }
}

/** The embedded shape's revocations: one process, so its memory, entries dropped after the credentials' TTL. */
export function memoryRevocations(ttlMs: number): CredentialRevocations {
  return new KvCredentialRevocations(new MemoryKvStore({ ttlMs }));
}
