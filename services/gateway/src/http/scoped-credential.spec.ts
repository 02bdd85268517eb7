import { checkScopedAccess } from './scoped-access.js';
import { ScopedCredentials } from './scoped-credential.js';

describe(ScopedCredentials.name, () => {
  const scope = { tenant: 'acme', agent: 'jarvis', session: 'sess-1', turn: 'turn-1' };

  it('should accept its own credential for exactly the scope it was minted for', () => {
    const credentials = new ScopedCredentials(undefined, 60_000);
    const token = credentials.mint(scope);
    expect(ScopedCredentials.looksScoped(token)).toBe(true);
    expect(credentials.verify(token)).toMatchObject(scope);
  });

  it('should refuse a changed claim, another secret, an expired or a revoked credential', () => {
    let now = 1_000;
    const credentials = new ScopedCredentials('s'.repeat(32), 60_000, () => now);
    const token = credentials.mint(scope);
    const [prefix, claims, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), tenant: 'other' })).toString('base64url');
    expect(credentials.verify(`${prefix}.${forged}.${sig}`)).toBeUndefined();
    expect(new ScopedCredentials('t'.repeat(32), 60_000, () => now).verify(token)).toBeUndefined();
    expect(new ScopedCredentials('s'.repeat(32), 60_000, () => now).verify(token)).toMatchObject(scope);
    now += 60_001;
    expect(credentials.verify(token)).toBeUndefined();
    now = 1_000;
    credentials.revoke(token);
    expect(credentials.verify(token)).toBeUndefined();
  });
});

describe(checkScopedAccess.name, () => {
  const scope = { tenant: 'acme', agent: 'jarvis', session: 'sess-1', turn: 'turn-1', exp: 0 };
  const allowed = (method: string, url: string, session?: string) => {
    try {
      checkScopedAccess(method, url, scope, session);
      return true;
    } catch {
      return false;
    }
  };

  it("should let the agent's commands use the capabilities its skills describe", () => {
    for (const [method, url] of [['POST', '/memories'], ['GET', '/search?q=x'], ['POST', '/compact'], ['GET', '/sessions/sess-1'], ['GET', '/skills/remember'], ['POST', '/executable-skills/adder/execute'], ['GET', '/agents/jarvis/files/user']]) {
      expect(`${method} ${url} ${allowed(method!, url!)}`).toBe(`${method} ${url} true`);
    }
  });

  it('should refuse other sessions, its own confirmations and turns, agent management, skill changes and MCP', () => {
    for (const [method, url] of [
      ['GET', '/sessions'], ['GET', '/sessions/sess-2'], ['POST', '/sessions/sess-1/confirm'], ['POST', '/sessions/sess-1/turns'],
      ['DELETE', '/sessions/sess-1/turns/current'], ['POST', '/agents'], ['GET', '/agents/other'], ['POST', '/skills'],
      ['POST', '/executable-skills'], ['PATCH', '/executable-skills/adder'], ['DELETE', '/executable-skills/adder'], ['POST', '/mcp'],
    ]) {
      expect(`${method} ${url} ${allowed(method!, url!)}`).toBe(`${method} ${url} false`);
    }
    expect(allowed('POST', '/compact', 'sess-2')).toBe(false);
  });
});
