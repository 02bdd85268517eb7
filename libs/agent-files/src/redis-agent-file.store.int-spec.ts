import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describeWithRedis, testServers } from '#testing';
import { agentFileStoreContract } from './agent-file-store.contract.js';
import { RedisAgentFileStore } from './redis-agent-file.store.js';

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

agentFileStoreContract(RedisAgentFileStore.name, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new RedisAgentFileStore({ redis: testServers.redisUrl, keyPrefix });
  const peer = new RedisAgentFileStore({ redis: testServers.redisUrl, keyPrefix });
  return {
    store,
    peer,
    cleanup: async () => {
      await dropPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});
