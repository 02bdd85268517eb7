import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { RedisSessionStore } from './redis-session.store.js';
import { sessionStoreContract } from './session-store.contract.js';

const describeRedis = await describeWithRedis();

sessionStoreContract(RedisSessionStore.name, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
  const peer = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
  return {
    store,
    peer,
    cleanup: async () => {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});

describeRedis(`${RedisSessionStore.name} owners of older sessions`, () => {
  it('should find the agent of a session stored before the owners hash existed', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const store = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
    const raw = new Redis(testServers.redisUrl);
    try {
      const tenant = 'ten*ant';
      const { id } = await store.create({ tenant, agent: 'jarvis' });
      await raw.del(`${keyPrefix}session-owners:${encodeURIComponent(tenant)}`);

      expect(await store.locate(tenant, id)).toBe('jarvis');
      expect(await store.locate('tenant', id)).toBeUndefined();
    } finally {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), raw.quit()]);
    }
  });
});
