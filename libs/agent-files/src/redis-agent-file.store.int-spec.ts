import { randomUUID } from 'node:crypto';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { agentFileStoreContract } from './agent-file-store.contract.js';
import { RedisAgentFileStore } from './redis-agent-file.store.js';

const describeRedis = await describeWithRedis();

agentFileStoreContract(RedisAgentFileStore.name, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new RedisAgentFileStore({ redis: testServers.redisUrl, keyPrefix });
  const peer = new RedisAgentFileStore({ redis: testServers.redisUrl, keyPrefix });
  return {
    store,
    peer,
    cleanup: async () => {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});
