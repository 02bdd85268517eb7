import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { isKvConflict, type KvStore } from '#kv';
import { leaseKey, ownerKey, sessionKey } from './kv-session.keys.js';
import { firstMessageText } from './session-record.js';

/** Stores the value unless the key has one (written since by this version, which wins). */
async function putIfAbsent(kv: KvStore, key: string, value: string): Promise<void> {
  await kv.put(key, value, { expected: 0 }).catch((err: unknown) => (isKvConflict(err) ? undefined : Promise.reject(err)));
}

const glob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');
const json = (text: string | undefined, fallback: unknown) => (text === undefined ? fallback : JSON.parse(text));

/**
 * Moves the sessions an earlier version kept in Redis (per session a meta hash, a message list, a skill set and a
 * lease key; per agent an index, per tenant an owners hash) into the bucket, fencing token and live lease included;
 * each session's old keys are deleted only once its record is stored, so an interrupted move is finished by the next
 * start, and instances moving at once store each session once. Returns how many sessions were moved.
 */
export async function moveRedisSessions(redis: Redis, prefix: string, kv: KvStore): Promise<number> {
  const head = `${prefix}session:`;
  let moved = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${glob(head)}*:meta`, 'COUNT', 200);
    cursor = next;
    for (const meta of keys) {
      const match = /^([^:]*):([^:]*):\{([^}]*)\}:meta$/.exec(meta.slice(head.length));
      if (!match) continue;
      const [, segment, agent, id] = match as unknown as [string, string, string, string];
      const scope = { tenant: decodeURIComponent(segment), agent };
      const base = meta.slice(0, -':meta'.length);
      const [m, messages, skills, lease, ttl] = (await redis.multi().hgetall(meta).lrange(`${base}:messages`, 0, -1)
        .smembers(`${base}:skills`).get(`${base}:lease`).pttl(`${base}:lease`).exec())!.map(([, v]) => v) as
        [Record<string, string>, string[], string[], string | null, number];
      if (Object.keys(m).length > 0) {
        const parsed = messages.map((text) => JSON.parse(text) as { role: 'user'; content: string });
        const record = {
          id, agent, version: Number(m.version ?? 0), message_count: parsed.length,
          active_skill: json(m.active_skill, null), loaded_skills: [...skills].sort(), metadata: json(m.metadata, {}),
          tokens: json(m.tokens, null), first_message: firstMessageText(parsed[0]), created_at: m.created_at,
          updated_at: m.updated_at, messages: parsed, fence: Number(m.fence ?? 0),
        };
        await putIfAbsent(kv, ownerKey(scope.tenant, id), agent);
        await putIfAbsent(kv, sessionKey(scope, id), JSON.stringify(record));
        const held = lease && /^(\d+):(.*)$/.exec(lease);
        if (held && ttl > 0) {
          const stored = { owner: held[2], token: Number(held[1]), expiresAt: Date.now() + ttl };
          await putIfAbsent(kv, leaseKey(scope, id), JSON.stringify(stored));
        }
        moved++;
      }
      await redis.multi().del(meta, `${base}:messages`, `${base}:skills`, `${base}:lease`)
        .zrem(`${prefix}sessions:${segment}:${agent}`, id).hdel(`${prefix}session-owners:${segment}`, id).exec();
    }
  } while (cursor !== '0');
  return moved;
}

const list = (dir: string) =>
  readdir(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? ([] as string[]) : Promise.reject(err)));

/**
 * Moves the sessions an earlier embedded version kept as `<dataDir>/sessions/<tenant>/<agent>/<id>.json` into the
 * bucket, removing each file (and emptied folders) once its record is stored. Returns how many were moved.
 */
export async function moveFileSessions(dataDir: string, kv: KvStore): Promise<number> {
  const root = join(dataDir, 'sessions');
  let moved = 0;
  for (const segment of await list(root)) {
    for (const agent of await list(join(root, segment))) {
      const dir = join(root, segment, agent);
      for (const name of (await list(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'))) {
        const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
        if (text === undefined) continue;
        const scope = { tenant: decodeURIComponent(segment), agent };
        const id = name.slice(0, -'.json'.length);
        await putIfAbsent(kv, ownerKey(scope.tenant, id), agent);
        await putIfAbsent(kv, sessionKey(scope, id), text);
        await rm(join(dir, name), { force: true });
        moved++;
      }
      await rmdir(dir).catch(() => undefined);
    }
    await rmdir(join(root, segment)).catch(() => undefined);
  }
  await rmdir(root).catch(() => undefined);
  return moved;
}
