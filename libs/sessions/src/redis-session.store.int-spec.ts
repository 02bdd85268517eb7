import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describeWithRedis, testServers } from '#testing';
import { RedisSessionStore } from './redis-session.store.js';
import { sessionStoreContract } from './session-store.contract.js';

const describeRedis = await describeWithRedis();

async function dropPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

sessionStoreContract(RedisSessionStore.name, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
  const peer = new RedisSessionStore({ redis: testServers.redisUrl, keyPrefix });
  return {
    store,
    peer,
    cleanup: async () => {
      await dropPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});
