import { randomUUID } from 'node:crypto';
import { RedisKvStore } from '#redis';
import { deleteRedisKeysWithPrefix, describeWithRedis, pollUntil, testServers } from '#testing';
import { channelStoreContract } from './channel-store.contract.js';
import { KvChannelStore } from './kv-channel.store.js';

const describeRedis = await describeWithRedis();

const fixture = async () => {
  const prefix = `test-${randomUUID().slice(0, 8)}:`;
  const open = () => {
    const kv = new RedisKvStore(testServers.redisUrl, 'channels', { keyPrefix: prefix });
    return new KvChannelStore(kv, kv, '123');
  };
  const store = open();
  const peer = open();
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

channelStoreContract(`${KvChannelStore.name} on Redis`, describeRedis, fixture);

describeRedis(`${KvChannelStore.name} on Redis: poller lease`, () => {
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
