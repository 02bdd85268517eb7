import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteRedisKeysWithPrefix, describeWithRedis, kvStoreContract, pollUntil, testServers } from '#testing';
import { RedisKvStore } from './redis-kv.store.js';

const describeRedis = await describeWithRedis();

kvStoreContract(RedisKvStore.name, describeRedis, async (options) => {
  const keyPrefix = `test-kv-${randomUUID().slice(0, 8)}:`;
  const store = new RedisKvStore(testServers.redisUrl, 'contract', { ...options, keyPrefix });
  const peer = new RedisKvStore(testServers.redisUrl, 'contract', { ...options, keyPrefix });
  return {
    store,
    peer,
    async cleanup() {
      await store.close();
      await peer.close();
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
    },
  };
});

describeRedis(`${RedisKvStore.name} indexes of a bucket with a TTL`, () => {
  it('should drop keys whose entries expired from its indexes as later writes go, without a listing', async () => {
    const keyPrefix = `test-kv-${randomUUID().slice(0, 8)}:`;
    const store = new RedisKvStore(testServers.redisUrl, 'ttl', { keyPrefix, ttlMs: 100 });
    const raw = new Redis(testServers.redisUrl);
    try {
      for (let i = 0; i < 10; i++) await store.put(`old.k${i}`, 'v');
      await pollUntil(
        async () => (await raw.exists(`${keyPrefix}kv:ttl:old.k9`)) === 0,
        5_000,
        'the entries to expire',
      );
      await store.put('new.k', 'v');
      expect(await raw.zrange(`${keyPrefix}kv-index:ttl`, '0', '-1')).toEqual(['new.k']);
      expect(await raw.zrange(`${keyPrefix}kv-expiry:ttl`, '0', '-1')).toEqual(['new.k']);
    } finally {
      await store.close();
      await raw.quit();
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
    }
  });
});
