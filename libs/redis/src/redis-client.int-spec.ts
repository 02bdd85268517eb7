import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, startOwnRedis, type OwnServer } from '#testing';
import { setProcessLogger } from '#logging';
import { createRedis, isRedisConnectionError, redisStates } from './redis-client.js';

/** Against a redis-server of the test's own (free port, own dir): never the shared one. */
describe(createRedis.name, () => {
  let dir: string;
  let server: OwnServer;
  const logs: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-redis-client-'));
    server = await startOwnRedis(dir);
    setProcessLogger({ warn: (_o, msg) => logs.push(msg), error: (_o, msg) => logs.push(msg) });
  });
  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('should refuse commands at once while Redis is away, never apply them later, serve again once back', async () => {
    const redis = createRedis(server.url, 'spec');
    try {
      await redis.set('k', 'before');
      expect(redisStates()).toContainEqual({ purpose: 'spec', state: 'connected' });
      await server.stop('SIGKILL');
      await pollUntil(
        () => redisStates().some((c) => c.purpose === 'spec' && c.state === 'reconnecting'),
        10_000,
        'the client to notice',
      );

      const refused = await redis.set('k', 'during').catch((err: unknown) => err);
      expect(isRedisConnectionError(refused)).toBe(true);
      expect(logs).toContain('Redis disconnected; reconnecting');

      await server.start();
      await pollUntil(
        async () => (await redis.get('k').catch(() => 'away')) !== 'away',
        20_000,
        'Redis to answer again',
      );
      // The refused write was not queued and replayed on reconnect.
      expect(await redis.get('k')).toBe('before');
      expect(logs).toContain('Redis reconnected');
    } finally {
      await redis.quit();
    }
    await pollUntil(
      () => !redisStates().some((c) => c.purpose === 'spec'),
      5_000,
      'the closed client to leave readiness',
    );
  }, 60_000);
});
