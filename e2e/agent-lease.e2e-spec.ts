import { Redis } from 'ioredis';
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

    it('should refuse the writes of a turn whose lease another worker took, and keep the session as the new holder left it', async () => {
      const id = (await api.post('/sessions', {})).body.id as string;
      sys.model.script({ content: [{ type: 'text', text: 'written too late' }], delayMs: 1_000 });

      const { events } = await streamTurn(sys.url, id, 'slow question', {}, async (e) => {
        if (e.event !== 'started') return;
        // What a second worker's acquire does once the first's lease lapsed: a newer token, and the lease is its own.
        const [lease] = await redis.keys(`${sys.env.ALFRED_REDIS_PREFIX}session:*{${id}}:lease`);
        const meta = lease!.replace(/:lease$/, ':meta');
        const token = await redis.hincrby(meta, 'fence', 1);
        await redis.set(lease!, `${token}:intruder`, 'PX', 60_000);
      });

      expect(named(events, 'done')[0].status).toBe('failed');
      expect(named(events, 'error')[0].error).toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/leased to another holder/) });
      expect((await api.get(`/sessions/${id}`)).body).toMatchObject({ version: 0, message_count: 0 });
    }, 30_000);
  });
});
