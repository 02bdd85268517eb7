import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { dependencyUnavailable } from '#errors';
import { lazyKvBucket } from '#bus';

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

/** Embedded: one process, one map; entries are dropped once what they end has expired. */
export class MemoryCredentialRevocations implements CredentialRevocations {
  private readonly entries = new Map<string, { at: number; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async revoke(revocation: Revocation, at: number, until: number): Promise<void> {
    const key = revocationKey(revocation);
    this.entries.set(key, {
      at: Math.max(at, this.entries.get(key)?.at ?? 0),
      until: Math.max(until, this.entries.get(key)?.until ?? 0),
    });
    const now = this.now();
    for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
  }

  async isRevoked(q: RevocationQuery): Promise<boolean> {
    const { turn, scopes } = keysOf(q);
    return this.entries.has(turn) || scopes.some((k) => (this.entries.get(k)?.at ?? -1) >= q.iat);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Distributed: a KV bucket whose entries expire after the credentials' TTL (nothing it could still end outlives that).
 * A turn's revocation is a key of its own; a session's or agent's holds the time it was revoked, and ends every
 * credential minted before. Each check reads the bucket (a revocation made through another gateway counts at once);
 * what this instance found revoked is remembered until it expires. While NATS is away a credential cannot be checked,
 * so its request is a fast 503, never accepted unchecked.
 */
export class NatsKvCredentialRevocations implements CredentialRevocations {
  private readonly kv: () => Promise<KV>;
  private readonly known = new Map<string, number>();

  constructor(
    nc: NatsConnection,
    name: string,
    ttlMs: number,
    private readonly connected: () => boolean,
    replicas = 1,
    timeoutMs = 2_500,
  ) {
    this.kv = lazyKvBucket(nc, name, { history: 1, ttl: ttlMs, replicas }, timeoutMs);
  }

  async revoke(revocation: Revocation, at: number, until: number): Promise<void> {
    const key = revocationKey(revocation);
    if (revocation.kind === 'turn') this.remember(key, until);
    await this.reach(
      'record a credential revocation',
      async (kv) => void (await kv.put(key, encoder.encode(String(at)))),
    );
  }

  async isRevoked(q: RevocationQuery): Promise<boolean> {
    const { turn, scopes } = keysOf(q);
    if (this.known.has(turn)) return true;
    const entries = await this.reach('check the credential', (kv) =>
      Promise.all([turn, ...scopes].map((k) => kv.get(k))),
    );
    const live = entries.map((e) => (e && e.operation === 'PUT' ? Number(decoder.decode(e.value)) : undefined));
    const revoked = live[0] !== undefined || live.slice(1).some((at) => at !== undefined && at >= q.iat);
    if (revoked) this.remember(turn, q.exp);
    return revoked;
  }

  private remember(key: string, until: number): void {
    this.known.set(key, until);
    const now = Date.now();
    for (const [k, u] of this.known) if (u <= now) this.known.delete(k);
  }

  private async reach<T>(what: string, op: (kv: KV) => Promise<T>): Promise<T> {
    if (!this.connected()) throw dependencyUnavailable('NATS', what);
    try {
      return await op(await this.kv());
    } catch (err) {
      throw dependencyUnavailable('NATS', `${what} (${String(err)})`);
    }
  }
}
