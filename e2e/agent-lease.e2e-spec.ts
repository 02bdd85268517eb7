import { Redis } from 'ioredis';
import { fromKeyToken } from '#kv';
import { RedisKvStore } from '#redis';
import { KvSessionStore, SESSIONS_BUCKET } from '#sessions';
import { describeWithNats, describeWithRedis, deleteRedisKeysWithPrefix, testServers } from '#testing';
import { client, type Client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

/**
 * A turn whose session lease another worker takes over while the model is still answering: the turn's writes carry
 * its fencing token, so whether it notices at its next heartbeat or first tries to write its messages, nothing of it
 * lands in the session, and the new holder's writes stand.
 */
describeNats('session lease fencing (NATS + Redis, loopback model)', () => {
  describeRedis('with sessions and leases in Redis', () => {
    let sys: AgentSystem;
    let api: Client;
    let redis: Redis;

    beforeAll(async () => {
      // The heartbeat comes after the model's answer: the turn tries to write before it could notice the takeover.
      sys = await startAgentSystem('nats', { ALFRED_TURN_HEARTBEAT_MS: '4000', ALFRED_TURN_LEASE_MS: '8000' });
      api = client(sys.url);
      redis = new Redis(testServers.redisUrl);
    }, 60_000);
    afterAll(async () => {
      await redis?.quit();
      await sys?.stop();
      if (sys) await deleteRedisKeysWithPrefix(testServers.redisUrl, sys.env.ALFRED_REDIS_PREFIX!);
    });

    it("should refuse the writes of a turn whose lease another worker took; the new holder's writes stay", async () => {
      const id = (await api.post('/sessions', {})).body.id as string;
      sys.model.script({ content: [{ type: 'text', text: 'written too late' }], delayMs: 1_000 });

      const { events } = await streamTurn(sys.url, id, 'slow question', {}, async (e) => {
        if (e.event !== 'started') return;
        // A second worker's acquire once the first's lease lapsed (its key gone): a newer token, the lease its own.
        const kv = new RedisKvStore(redis, SESSIONS_BUCKET, { keyPrefix: sys.env.ALFRED_REDIS_PREFIX });
        const lease = (await kv.keys('l.')).find((key) => key.endsWith(`.${id}`))!;
        const [, tenant, agent] = lease.split('.') as [string, string, string];
        await kv.delete(lease);
        expect(
          await new KvSessionStore(kv).acquireLease({ tenant: fromKeyToken(tenant), agent }, id, 'intruder', 60_000),
        ).toMatchObject({ token: 2 });
      });

      expect(named(events, 'done')[0].status).toBe('failed');
      expect(named(events, 'error')[0].error).toMatchObject({
        code: 'CONFLICT',
        message: expect.stringMatching(/leased to another holder/),
      });
      expect((await api.get(`/sessions/${id}`)).body).toMatchObject({ version: 0, message_count: 0 });
    }, 30_000);
  });
});
