import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { memoryRevocations, type CredentialRevocations } from './credential-revocations.js';

/** What a scoped credential lets its holder be: one agent of one tenant, in one session, until it expires. */
export const CredentialScope = z.object({
  tenant: z.string().min(1),
  agent: z.string().min(1),
  session: z.string().min(1),
  turn: z.string().min(1),
  exp: z.number().int(),
  /** When it was minted (absent in credentials of earlier versions: then any session or agent revocation ends it). */
  iat: z.number().int().default(0),
});
export type CredentialScope = z.infer<typeof CredentialScope>;

const PREFIX = 'alfred_sc';

/**
 * Short-lived credentials for the agent's bash (`alfred_sc.<claims>.<hmac>`): minted by the gateway when a turn starts,
 * accepted by the gateway like a key for that scope only, and expired after the TTL in any case. They are revoked
 * earlier at every end of their turn (agent-runtime asks when the turn ends however it ends; the gateway also when it
 * sees the turn's `done` or loses the turn's worker) and when their session or agent is deleted. Revocations hold on
 * every gateway instance (see CredentialRevocations). The signing secret never leaves the gateway; with several
 * gateway instances, give them the same ALFRED_CREDENTIAL_SECRET (without it each instance signs with its own).
 */
export class ScopedCredentials {
  private readonly secret: Buffer;

  constructor(
    secret: string | undefined,
    private readonly ttlMs: number,
    private readonly revocations: CredentialRevocations = memoryRevocations(ttlMs),
    private readonly now: () => number = Date.now,
  ) {
    this.secret = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  static looksScoped(token: string): boolean {
    return token.startsWith(`${PREFIX}.`);
  }

  mint(scope: Omit<CredentialScope, 'exp' | 'iat'>): string {
    const iat = this.now();
    const claims = Buffer.from(JSON.stringify({ ...scope, iat, exp: iat + this.ttlMs })).toString('base64url');
    return `${PREFIX}.${claims}.${this.sign(claims)}`;
  }

  /** The scope of a valid, unexpired, unrevoked credential; undefined otherwise (503 while revocations are away). */
  async verify(token: string): Promise<CredentialScope | undefined> {
    const scope = this.scopeOf(token);
    if (!scope) return undefined;
    const revoked = await this.revocations.isRevoked({
      id: this.idOf(token),
      tenant: scope.tenant,
      session: scope.session,
      agent: scope.agent,
      iat: scope.iat,
      exp: scope.exp,
    });
    return revoked ? undefined : scope;
  }

  /** Ends a credential before its expiry (its turn is over), on every gateway: its scope; undefined if not ours. */
  async revoke(token: string): Promise<CredentialScope | undefined> {
    const scope = this.scopeOf(token);
    if (!scope) return undefined;
    await this.revocations.revoke({ kind: 'turn', id: this.idOf(token) }, this.now(), scope.exp);
    return scope;
  }

  /** Ends every credential minted so far for the session (it was deleted), on every gateway. */
  async revokeSession(tenant: string, session: string): Promise<void> {
    const now = this.now();
    await this.revocations.revoke({ kind: 'session', tenant, session }, now, now + this.ttlMs);
  }

  /** Ends every credential minted so far for the agent (it was deleted), on every gateway. */
  async revokeAgent(tenant: string, agent: string): Promise<void> {
    const now = this.now();
    await this.revocations.revoke({ kind: 'agent', tenant, agent }, now, now + this.ttlMs);
  }

  /** The scope of a credential with our signature that has not expired (revocation not checked). */
  scopeOf(token: string): CredentialScope | undefined {
    const [prefix, claims, signature, ...rest] = token.split('.');
    if (prefix !== PREFIX || !claims || !signature || rest.length > 0) return undefined;
    const expected = Buffer.from(this.sign(claims));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const parsed = CredentialScope.safeParse(json);
    if (!parsed.success || parsed.data.exp <= this.now()) return undefined;
    return parsed.data;
  }

  /** A credential's id: its signature (unique per credential, and meaningless without the claims). */
  private idOf(token: string): string {
    return token.split('.')[2]!;
  }

  private sign(claims: string): string {
    return createHmac('sha256', this.secret).update(`${PREFIX}.${claims}`).digest('base64url');
  }
}
