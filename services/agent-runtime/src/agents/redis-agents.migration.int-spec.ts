import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { KvAgentStore } from '#agent-registry';
import { NatsKvStore } from '#bus';
import { deleteRedisKeysWithPrefix, describeWithNats, describeWithRedis, testServers } from '#testing';
import { moveRedisAgents } from './redis-agents.migration.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();
const record = (name: string, persona: string) => ({
  name,
  persona,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** Agents an earlier version kept in Redis reach the shared registry once, and leave Redis. */
describeNats('moveRedisAgents', () => {
  describeRedis('from Redis into the registry', () => {
    let nc: NatsConnection;
    let redis: Redis;
    const prefix = `t-${randomUUID().slice(0, 8)}:`;
    const bucket = `agents-move-${randomUUID().slice(0, 8)}`;
    beforeAll(async () => {
      nc = await connect({ servers: testServers.natsUrl });
      redis = new Redis(testServers.redisUrl);
    });
    afterAll(async () => {
      await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      await redis.quit();
      await nc.close();
    });

    it("should move every tenant's agents once, keep a record the registry already has, and empty Redis", async () => {
      const registry = new KvAgentStore(new NatsKvStore(nc, bucket));
      await redis.hset(
        `${prefix}agents:{${encodeURIComponent('acme.corp')}}`,
        'jarvis',
        JSON.stringify(record('jarvis', 'formal')),
        'scout',
        JSON.stringify(record('scout', '')),
      );
      await redis.hset(`${prefix}agents:{other}`, 'jarvis', JSON.stringify(record('jarvis', 'old')));
      await registry.create('other', record('jarvis', 'newer'));

      expect(await moveRedisAgents(testServers.redisUrl, prefix, registry)).toBe(3);

      expect((await registry.list('acme.corp')).map((r) => r.name).sort()).toEqual(['jarvis', 'scout']);
      expect((await registry.get('acme.corp', 'jarvis'))?.persona).toBe('formal');
      expect((await registry.get('other', 'jarvis'))?.persona).toBe('newer');
      expect(await redis.keys(`${prefix}agents:*`)).toEqual([]);
      expect(await moveRedisAgents(testServers.redisUrl, prefix, registry)).toBe(0);
    });
  });
});
