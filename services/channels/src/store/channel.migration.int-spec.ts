import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { RedisKvStore } from '#redis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { moveFileChannels, moveRedisChannels } from './channel.migration.js';
import { KvChannelStore } from './kv-channel.store.js';

const describeRedis = await describeWithRedis();
const chat = { agent: 'alfred', sessions: { alfred: 'sess-1' }, confirmations: {} };

describe(moveFileChannels.name, () => {
  it("should move an earlier embedded version's chats and update records to the bucket, drop its folder", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-channels-move-'));
    try {
      const root = join(dir, 'channels', '123');
      await mkdir(join(root, 'chats'), { recursive: true });
      await mkdir(join(root, 'updates'), { recursive: true });
      await writeFile(join(root, 'chats', '-100%3A7.json'), JSON.stringify({ value: chat }));
      await writeFile(
        join(root, 'updates', '42.json'),
        JSON.stringify({ value: { status: 'running', turn_id: 'turn-1' } }),
      );
      const kv = new FileKvStore(join(dir, 'kv', 'channels'));

      expect(await moveFileChannels(dir, '123', kv, 60_000)).toBe(2);

      const store = new KvChannelStore(kv, new MemoryKvStore(), '123');
      expect(await store.getChat('-100:7')).toEqual(chat);
      expect(await store.getUpdate(42)).toEqual({ status: 'running', turn_id: 'turn-1' });
      expect(await readdir(join(dir, 'channels'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeRedis(moveRedisChannels.name, () => {
  it("should move an earlier version's chat and update keys into the bucket and delete them", async () => {
    const prefix = `test-${randomUUID().slice(0, 8)}:`;
    const raw = new Redis(testServers.redisUrl);
    const kv = new RedisKvStore(raw, 'channels', { keyPrefix: prefix });
    try {
      await raw.set(`${prefix}channels:123:chat:-100%3A7`, JSON.stringify(chat));
      await raw.set(`${prefix}channels:123:update:42`, JSON.stringify({ status: 'done' }), 'PX', 60_000);
      await raw.set(`${prefix}channels:123:poller`, 'old-owner', 'PX', 60_000);

      expect(await moveRedisChannels(raw, prefix, '123', kv)).toBe(2);

      const store = new KvChannelStore(kv, kv, '123');
      expect(await store.getChat('-100:7')).toEqual(chat);
      expect(await store.getUpdate(42)).toEqual({ status: 'done' });
      expect(await raw.keys(`${prefix}channels:123:*`)).toEqual([`${prefix}channels:123:poller`]);
    } finally {
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      await raw.quit();
    }
  });
});
