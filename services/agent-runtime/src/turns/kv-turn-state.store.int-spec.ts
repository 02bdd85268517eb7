import { randomUUID } from 'node:crypto';
import { RedisKvStore } from '#redis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { turnStateContract } from './turn-state.contract.js';
import { KvTurnStateStore, TURN_STATE_TTL_MS } from './turn-state.store.js';

const describeRedis = await describeWithRedis();

describeRedis(`${KvTurnStateStore.name} on Redis`, () => {
  turnStateContract(async () => {
    const keyPrefix = `t-${randomUUID().slice(0, 8)}:`;
    const store = new KvTurnStateStore(
      new RedisKvStore(testServers.redisUrl, 'turn-state', { keyPrefix, ttlMs: TURN_STATE_TTL_MS }),
    );
    return {
      store,
      async dispose() {
        await store.close();
        await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      },
    };
  });
});
