import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { checkScopedAccess } from './scoped-access.js';

const scope = { tenant: 't', agent: 'alfred', session: 's-1', turn: 'u-1', exp: Date.now() + 60_000, iat: Date.now() };
const decide = (method: string, url: string) => {
  try {
    checkScopedAccess(method, url, scope, undefined);
    return 'allowed';
  } catch (err) {
    return err instanceof AlfredError && err.code === ErrorCode.Forbidden ? 'forbidden' : String(err);
  }
};

describe(checkScopedAccess.name, () => {
  it("should keep installing, updating, deleting and consenting to skills from an agent's own credential", () => {
    expect(decide('POST', '/skills/install')).toBe('forbidden');
    expect(decide('POST', '/skills/update')).toBe('forbidden');
    expect(decide('POST', '/skills/pdf-tables/update')).toBe('forbidden');
    expect(decide('DELETE', '/skills/pdf-tables?confirm=true')).toBe('forbidden');
    expect(decide('POST', '/executable-skills/echo-tool/consent')).toBe('forbidden');
  });

  it('should still let it read skills, record feedback and run executable skills', () => {
    expect(decide('GET', '/skills?installed_from=x')).toBe('allowed');
    expect(decide('GET', '/skills/pdf-tables')).toBe('allowed');
    expect(decide('POST', '/skills/pdf-tables/feedback')).toBe('allowed');
    expect(decide('POST', '/skills/echo-tool/execute')).toBe('allowed');
  });
});
