import { checkScopedAccess } from './scoped-access.js';
import { memoryRevocations } from './credential-revocations.js';
import { ScopedCredentials } from './scoped-credential.js';

describe(ScopedCredentials.name, () => {
  const scope = { tenant: 'acme', agent: 'jarvis', session: 'sess-1', turn: 'turn-1' };
  const clock = (start: number) => {
    const c = { now: start, fn: () => c.now };
    return c;
  };

  it('should accept its own credential for exactly the scope it was minted for', async () => {
    const credentials = new ScopedCredentials(undefined, 60_000);
    const token = credentials.mint(scope);
    expect(ScopedCredentials.looksScoped(token)).toBe(true);
    expect(await credentials.verify(token)).toMatchObject(scope);
  });

  it('should refuse a changed claim, another secret, an expired or a revoked credential', async () => {
    const t = clock(1_000);
    const credentials = new ScopedCredentials('s'.repeat(32), 60_000, memoryRevocations(60_000), t.fn);
    const token = credentials.mint(scope);
    const [prefix, claims, sig] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), tenant: 'other' }),
    ).toString('base64url');
    expect(await credentials.verify(`${prefix}.${forged}.${sig}`)).toBeUndefined();
    expect(await new ScopedCredentials('t'.repeat(32), 60_000, undefined, t.fn).verify(token)).toBeUndefined();
    expect(await new ScopedCredentials('s'.repeat(32), 60_000, undefined, t.fn).verify(token)).toMatchObject(scope);
    t.now += 60_001;
    expect(await credentials.verify(token)).toBeUndefined();
    t.now = 1_000;
    expect(await credentials.revoke(token)).toMatchObject(scope);
    expect(await credentials.verify(token)).toBeUndefined();
  });

  it('should hold a revocation on every instance sharing the revocations, not only the one that revoked', async () => {
    const shared = memoryRevocations(60_000);
    const [a, b] = [
      new ScopedCredentials('s'.repeat(32), 60_000, shared),
      new ScopedCredentials('s'.repeat(32), 60_000, shared),
    ];
    const token = a.mint(scope);
    expect(await b.verify(token)).toMatchObject(scope);
    await a.revoke(token);
    expect(await b.verify(token)).toBeUndefined();
  });

  it('should end every credential minted for a deleted session or agent till then, no other or later', async () => {
    const t = clock(1_000);
    const credentials = new ScopedCredentials('s'.repeat(32), 60_000, memoryRevocations(60_000), t.fn);
    const before = credentials.mint(scope);
    const otherSession = credentials.mint({ ...scope, session: 'sess-2', turn: 'turn-2' });
    t.now += 10;
    await credentials.revokeSession('acme', 'sess-1');
    expect(await credentials.verify(before)).toBeUndefined();
    expect(await credentials.verify(otherSession)).toBeDefined();
    t.now += 10;
    // A session id can come back (a keyed create after the delete): its new credentials are not ended.
    expect(await credentials.verify(credentials.mint(scope))).toBeDefined();
    await credentials.revokeAgent('acme', 'jarvis');
    expect(await credentials.verify(otherSession)).toBeUndefined();
    expect(await credentials.verify(credentials.mint({ ...scope, tenant: 'other' }))).toBeDefined();
  });
});

describe(checkScopedAccess.name, () => {
  const scope = { tenant: 'acme', agent: 'jarvis', session: 'sess-1', turn: 'turn-1', exp: 0, iat: 0 };
  const allowed = (method: string, url: string, session?: string) => {
    try {
      checkScopedAccess(method, url, scope, session);
      return true;
    } catch {
      return false;
    }
  };

  it("should let the agent's commands use the capabilities its skills describe", () => {
    for (const [method, url] of [
      ['POST', '/memories'],
      ['GET', '/search?q=x'],
      ['POST', '/compact'],
      ['GET', '/sessions/sess-1'],
      ['GET', '/skills/remember'],
      ['POST', '/executable-skills/adder/execute'],
      ['GET', '/agents/jarvis/files/user'],
    ]) {
      expect(`${method} ${url} ${allowed(method!, url!)}`).toBe(`${method} ${url} true`);
    }
  });

  it('should refuse other sessions, its own confirmations and turns, agent management, skill changes and MCP', () => {
    for (const [method, url] of [
      ['GET', '/sessions'],
      ['GET', '/sessions/sess-2'],
      ['POST', '/sessions/sess-1/confirm'],
      ['POST', '/sessions/sess-1/turns'],
      ['DELETE', '/sessions/sess-1/turns/current'],
      ['POST', '/agents'],
      ['GET', '/agents/other'],
      ['POST', '/skills'],
      ['POST', '/executable-skills'],
      ['PATCH', '/executable-skills/adder'],
      ['DELETE', '/executable-skills/adder'],
      ['POST', '/mcp'],
    ]) {
      expect(`${method} ${url} ${allowed(method!, url!)}`).toBe(`${method} ${url} false`);
    }
    expect(allowed('POST', '/compact', 'sess-2')).toBe(false);
  });
});
