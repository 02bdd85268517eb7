import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisKvStore } from '#redis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { moveRedisAgentFiles } from './agent-file.migration.js';
import { agentFileStoreContract } from './agent-file-store.contract.js';
import { KvAgentFileStore } from './kv-agent-file.store.js';

const describeRedis = await describeWithRedis();

agentFileStoreContract(`${KvAgentFileStore.name} on Redis`, describeRedis, async () => {
  const keyPrefix = `test:${randomUUID()}:`;
  const store = new KvAgentFileStore(new RedisKvStore(testServers.redisUrl, 'agent-files', { keyPrefix }));
  const peer = new KvAgentFileStore(new RedisKvStore(testServers.redisUrl, 'agent-files', { keyPrefix }));
  return {
    store,
    peer,
    cleanup: async () => {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix);
      await Promise.all([store.close(), peer.close()]);
    },
  };
});

describeRedis(moveRedisAgentFiles.name, () => {
  it("should move an earlier version's agent files with every version once, and delete their keys", async () => {
    const prefix = `test:${randomUUID()}:`;
    const raw = new Redis(testServers.redisUrl);
    const kv = new RedisKvStore(raw, 'agent-files', { keyPrefix: prefix });
    try {
      const base = `${prefix}agent-file:{acme%2Ecorp:jarvis:soul}`;
      const meta = (version: number) =>
        JSON.stringify({
          at: `2026-01-0${version}T00:00:00.000Z`,
          reason: `r${version}`,
          size: 3,
          digest: `sha256:${version}${'0'.repeat(63)}`,
        });
      await raw.hset(`${base}:head`, { version: 2, updated_at: '2026-01-02T00:00:00.000Z' });
      await raw.hset(`${base}:contents`, { 1: 'one', 2: 'two' });
      await raw.hset(`${base}:meta`, { 1: meta(1), 2: meta(2) });

      expect(await moveRedisAgentFiles(raw, prefix, kv)).toBe(1);

      const store = new KvAgentFileStore(kv);
      const scope = { tenant: 'acme.corp', agent: 'jarvis' };
      expect(await store.read(scope, 'soul')).toMatchObject({
        content: 'two',
        version: 2,
        updated_at: '2026-01-02T00:00:00.000Z',
      });
      expect((await store.readVersion(scope, 'soul', 1)).content).toBe('one');
      expect(await raw.keys(`${prefix}agent-file:*`)).toEqual([]);
      expect(await moveRedisAgentFiles(raw, prefix, kv)).toBe(0);
    } finally {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      await raw.quit();
    }
  });
});
