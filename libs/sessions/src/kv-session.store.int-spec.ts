import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisKvStore } from '#redis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { KvSessionStore } from './kv-session.store.js';
import { moveRedisSessions } from './session.migration.js';
import { sessionStoreContract } from './session-store.contract.js';

const describeRedis = await describeWithRedis();

sessionStoreContract(`${KvSessionStore.name} on Redis`, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new KvSessionStore(new RedisKvStore(testServers.redisUrl, 'sessions', { keyPrefix }));
  const peer = new KvSessionStore(new RedisKvStore(testServers.redisUrl, 'sessions', { keyPrefix }));
  return {
    store,
    peer,
    cleanup: async () => {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});

describeRedis(moveRedisSessions.name, () => {
  it("should move an earlier version's sessions (fence and live lease too) once, deleting their keys", async () => {
    const prefix = `test:${randomUUID()}:`;
    const raw = new Redis(testServers.redisUrl);
    const kv = new RedisKvStore(raw, 'sessions', { keyPrefix: prefix });
    const store = new KvSessionStore(kv);
    const scope = { tenant: 'acme.corp', agent: 'jarvis' };
    try {
      const base = `${prefix}session:acme%2Ecorp:jarvis:{old-1}`;
      await raw.hset(`${base}:meta`, {
        id: 'old-1',
        agent: 'jarvis',
        version: 3,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-02T00:00:00.000Z',
        active_skill: '"pdf"',
        metadata: '{"channel":"cli"}',
        tokens: 'null',
        fence: 5,
      });
      await raw.rpush(
        `${base}:messages`,
        JSON.stringify({ role: 'user', content: 'first' }),
        JSON.stringify({ role: 'assistant', content: 'ok' }),
      );
      await raw.sadd(`${base}:skills`, 'pdf');
      await raw.set(`${base}:lease`, '5:worker-a', 'PX', 60_000);
      await raw.zadd(`${prefix}sessions:acme%2Ecorp:jarvis`, 1, 'old-1');
      await raw.hset(`${prefix}session-owners:acme%2Ecorp`, 'old-1', 'jarvis');

      expect(await moveRedisSessions(raw, prefix, kv)).toBe(1);

      expect(await store.get(scope, 'old-1')).toMatchObject({
        version: 3,
        message_count: 2,
        active_skill: 'pdf',
        loaded_skills: ['pdf'],
        metadata: { channel: 'cli' },
        first_message: 'first',
      });
      expect(await store.locate('acme.corp', 'old-1')).toBe('jarvis');
      expect((await store.list(scope, {})).total).toBe(1);
      // The lease an earlier worker held is still its own, and the fence moves on from the old one.
      expect(await store.acquireLease(scope, 'old-1', 'worker-b', 10_000)).toBeUndefined();
      expect(await store.releaseLease(scope, 'old-1', 'worker-a')).toBe(true);
      expect(await store.acquireLease(scope, 'old-1', 'worker-b', 10_000)).toEqual({ owner: 'worker-b', token: 6 });
      expect(await raw.keys(`${prefix}session*`)).toEqual([]);
      expect(await moveRedisSessions(raw, prefix, kv)).toBe(0);
    } finally {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      await raw.quit();
    }
  });
});
