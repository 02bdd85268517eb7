import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { putIfAbsent, type KvStore } from '#kv';
import { safeSegment } from '#sessions';
import type { ChatState, UpdateRecord } from './channel.store.js';
import { channelKeys } from './kv-channel.store.js';

const glob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Moves a bot's chats and handled updates an earlier version kept in Redis (`channels:<bot>:chat:<chat>`,
 * `channels:<bot>:update:<id>`) into the bucket, deleting each old key once stored. Returns how many keys moved.
 */
export async function moveRedisChannels(redis: Redis, prefix: string, bot: string, kv: KvStore): Promise<number> {
  const base = `${prefix}channels:${safeSegment(bot)}:`;
  const keys = channelKeys(bot);
  let moved = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${glob(base)}*`, 'COUNT', 200);
    cursor = next;
    for (const key of found) {
      const rest = key.slice(base.length);
      const [value, ttl] = (await redis.multi().get(key).pttl(key).exec())!.map(([, v]) => v) as [
        string | null,
        number,
      ];
      if (value !== null && rest.startsWith('chat:'))
        await putIfAbsent(kv, keys.chat(decodeURIComponent(rest.slice(5))), value);
      if (value !== null && rest.startsWith('update:') && ttl > 0) {
        const record = { ...(JSON.parse(value) as UpdateRecord), expiresAt: Date.now() + ttl };
        await putIfAbsent(kv, keys.update(Number(rest.slice(7))), JSON.stringify(record));
      }
      if (rest.startsWith('chat:') || rest.startsWith('update:')) {
        await redis.del(key);
        moved++;
      }
    }
  } while (cursor !== '0');
  return moved;
}

const list = (dir: string) =>
  readdir(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? ([] as string[]) : Promise.reject(err)));

/**
 * Moves a bot's chats and handled updates an earlier embedded version kept under `<dataDir>/channels/<bot>/` into the
 * bucket, then removes that folder. A running update's record had no expiry there: it is kept for `retentionMs`.
 */
export async function moveFileChannels(
  dataDir: string,
  bot: string,
  kv: KvStore,
  retentionMs: number,
): Promise<number> {
  const root = join(dataDir, 'channels', safeSegment(bot));
  const keys = channelKeys(bot);
  let moved = 0;
  for (const name of (await list(join(root, 'chats'))).filter((n) => n.endsWith('.json'))) {
    const { value } = JSON.parse(await readFile(join(root, 'chats', name), 'utf8')) as { value: ChatState };
    await putIfAbsent(kv, keys.chat(decodeURIComponent(name.slice(0, -5))), JSON.stringify(value));
    moved++;
  }
  for (const name of (await list(join(root, 'updates'))).filter((n) => n.endsWith('.json'))) {
    const { value, expires } = JSON.parse(await readFile(join(root, 'updates', name), 'utf8')) as {
      value: UpdateRecord;
      expires?: number;
    };
    await putIfAbsent(
      kv,
      keys.update(Number(name.slice(0, -5))),
      JSON.stringify({ ...value, expiresAt: expires ?? Date.now() + retentionMs }),
    );
    moved++;
  }
  await rm(root, { recursive: true, force: true });
  return moved;
}
