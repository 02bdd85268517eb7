import { randomUUID } from 'node:crypto';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { turnStateContract } from './turn-state.contract.js';
import { RedisTurnStateStore } from './redis-turn-state.store.js';

const describeRedis = await describeWithRedis();

describeRedis(RedisTurnStateStore.name, () => {
  turnStateContract(async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}:`;
    const store = new RedisTurnStateStore(testServers.redisUrl, prefix);
    return {
      store,
      async dispose() {
        await store.close();
        await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      },
    };
  });
});
