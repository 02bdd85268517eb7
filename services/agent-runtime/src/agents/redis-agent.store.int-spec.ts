import { randomUUID } from 'node:crypto';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { agentStoreContract } from './agent-store.contract.js';
import { RedisAgentStore } from './redis-agent.store.js';

const describeRedis = await describeWithRedis();

describeRedis(RedisAgentStore.name, () => {
  agentStoreContract(async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}:`;
    const store = new RedisAgentStore(testServers.redisUrl, prefix);
    return {
      store,
      async dispose() {
        await store.close();
        await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      },
    };
  });
});
