import { randomUUID } from 'node:crypto';
import { deleteRedisKeysWithPrefix, describeWithRedis, kvStoreContract, testServers } from '#testing';
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
