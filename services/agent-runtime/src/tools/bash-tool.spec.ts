import { scrubbedEnv } from './bash-tool.js';

describe(scrubbedEnv.name, () => {
  const opts = { apiUrl: 'http://127.0.0.1:8080', path: '/usr/bin:/bin', defaultTimeoutMs: 1000, maxOutputChars: 1000 };
  const ctx = { scope: { agent: 'jarvis' }, sessionId: 'sess-1' };

  it('should give a command only the allowlisted variables', () => {
    process.env.ALFRED_TEST_SECRET = 'worker-secret';
    try {
      expect(scrubbedEnv(opts, ctx, '/ws')).toEqual({
        PATH: '/usr/bin:/bin',
        HOME: '/ws',
        TMPDIR: '/ws',
        LANG: 'C.UTF-8',
        ALFRED_API_URL: 'http://127.0.0.1:8080',
        ALFRED_AGENT: 'jarvis',
        ALFRED_SESSION_ID: 'sess-1',
      });
    } finally {
      delete process.env.ALFRED_TEST_SECRET;
    }
  });

  it("should pass the caller's API key when the gateway required one", () => {
    expect(scrubbedEnv(opts, { ...ctx, apiKey: 'caller-key-0123456789' }, '/ws').ALFRED_API_KEY).toBe('caller-key-0123456789');
  });
});
