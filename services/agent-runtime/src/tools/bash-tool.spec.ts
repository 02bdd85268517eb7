import { scrubbedEnv } from './bash-tool.js';

describe(scrubbedEnv.name, () => {
  const ctx = { scope: { agent: 'jarvis' }, sessionId: 'sess-1' };

  it('should give a command only the allowlisted variables', () => {
    process.env.ALFRED_TEST_SECRET = 'worker-secret';
    try {
      expect(scrubbedEnv(ctx)).toEqual({
        ALFRED_AGENT: 'jarvis',
        ALFRED_SESSION_ID: 'sess-1',
      });
    } finally {
      delete process.env.ALFRED_TEST_SECRET;
    }
  });
});
