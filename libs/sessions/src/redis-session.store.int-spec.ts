import { randomUUID } from 'node:crypto';
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
