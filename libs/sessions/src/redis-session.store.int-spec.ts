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

describeRedis(`${RedisSessionStore.name} leases from before fencing tokens`, () => {
  it('should treat a lease stored as a bare owner as held by that owner (token 0) until it lapses', async () => {
    const keyPrefix = `test:${randomUUID()}:`;
    const store = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
    const raw = new Redis(testServers.redisUrl);
    try {
      const scope = { tenant: 't', agent: 'alfred' };
      const { id } = await store.create(scope);
      const [meta] = await raw.keys(`${keyPrefix}session:*{${id}}:meta`);
      await raw.set(meta!.replace(/:meta$/, ':lease'), 'old-worker', 'PX', 10_000);

      expect(await store.acquireLease(scope, id, 'new-worker', 10_000)).toBeUndefined();
      expect(await store.renewLease(scope, id, 'old-worker', 10_000)).toBe(true);
      expect(await store.releaseLease(scope, id, 'old-worker')).toBe(true);
      expect(await store.acquireLease(scope, id, 'new-worker', 10_000)).toEqual({ owner: 'new-worker', token: 1 });
    } finally {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), raw.quit()]);
    }
  });
});
