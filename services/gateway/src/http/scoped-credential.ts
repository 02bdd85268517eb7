import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** What a scoped credential lets its holder be: one agent of one tenant, in one session, until it expires. */
export const CredentialScope = z.object({ tenant: z.string().min(1), agent: z.string().min(1), session: z.string().min(1), turn: z.string().min(1), exp: z.number().int() });
export type CredentialScope = z.infer<typeof CredentialScope>;

const PREFIX = 'alfred_sc';

/**
 * Short-lived credentials for the agent's bash (`alfred_sc.<claims>.<hmac>`): minted by the gateway when a turn starts,
 * accepted by the gateway like a key for that scope only, revoked when the turn's `done` passes through, and expired
 * after the TTL in any case. The signing secret never leaves the gateway; with several gateway instances, give them
 * the same ALFRED_CREDENTIAL_SECRET (without it each instance signs with its own random secret).
 */
export class ScopedCredentials {
  private readonly secret: Buffer;
  private readonly revoked = new Map<string, number>();

  constructor(
    secret: string | undefined,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.secret = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  static looksScoped(token: string): boolean {
    return token.startsWith(`${PREFIX}.`);
  }

  mint(scope: Omit<CredentialScope, 'exp'>): string {
    const claims = Buffer.from(JSON.stringify({ ...scope, exp: this.now() + this.ttlMs })).toString('base64url');
    return `${PREFIX}.${claims}.${this.sign(claims)}`;
  }

  /** The scope of a valid, unexpired, unrevoked credential; undefined otherwise. */
  verify(token: string): CredentialScope | undefined {
    const [prefix, claims, signature, ...rest] = token.split('.');
    if (prefix !== PREFIX || !claims || !signature || rest.length > 0) return undefined;
    const expected = Buffer.from(this.sign(claims));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    let parsed;
    try {
      parsed = CredentialScope.safeParse(JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')));
    } catch {
      return undefined;
    }
    if (!parsed.success || parsed.data.exp <= this.now() || this.revoked.has(signature)) return undefined;
    return parsed.data;
  }

  /** Ends a credential before its expiry (its turn is over). */
  revoke(token: string): void {
    const scope = this.verify(token);
    if (!scope) return;
    this.revoked.set(token.split('.')[2]!, scope.exp);
    const now = this.now();
    for (const [sig, exp] of this.revoked) if (exp <= now) this.revoked.delete(sig);
  }

  private sign(claims: string): string {
    return createHmac('sha256', this.secret).update(`${PREFIX}.${claims}`).digest('base64url');
  }
}
