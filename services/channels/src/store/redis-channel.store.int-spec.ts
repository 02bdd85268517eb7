import { randomUUID } from 'node:crypto';
import { deleteRedisKeysWithPrefix, describeWithRedis, pollUntil, testServers } from '#testing';
import { channelStoreContract } from './channel-store.contract.js';
import { RedisChannelStore } from './redis-channel.store.js';

const describeRedis = await describeWithRedis();

const fixture = async () => {
  const prefix = `test-${randomUUID().slice(0, 8)}:`;
  const store = new RedisChannelStore(testServers.redisUrl, prefix, '123');
  const peer = new RedisChannelStore(testServers.redisUrl, prefix, '123');
  return {
    store,
    peer,
    async cleanup() {
      await store.close();
      await peer.close();
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
    },
  };
};

channelStoreContract(RedisChannelStore.name, describeRedis, fixture);

describeRedis(`${RedisChannelStore.name} poller lease`, () => {
  it('should give the lease to one owner at a time, and to another once released or lapsed', async () => {
    const fx = await fixture();
    try {
      expect(await fx.store.holdPoller('a', 300)).toBe(true);
      expect(await fx.peer.holdPoller('b', 300)).toBe(false);
      await fx.peer.releasePoller('b');
      expect(await fx.peer.holdPoller('b', 300)).toBe(false);
      await fx.store.releasePoller('a');
      expect(await fx.peer.holdPoller('b', 200)).toBe(true);
      // b stops renewing: its lease lapses and a can take over.
      await pollUntil(() => fx.store.holdPoller('a', 300), 5_000, 'the lapsed lease');
    } finally {
      await fx.cleanup();
    }
  });
});
