import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { putIfAbsent, type KvStore } from '#kv';
import type { Scope, SessionView } from '#contracts';
import { leaseKey, ownerKey, sessionKey } from './kv-session.keys.js';
import { SessionMessages } from './kv-session.messages.js';
import { firstMessageText } from './session-record.js';

/** Stores an earlier version's session as a record and one chunk of its messages, unless it was stored already. */
async function adopt(kv: KvStore, scope: Scope, view: SessionView & { fence?: number }): Promise<void> {
  if (await kv.get(sessionKey(scope, view.id))) return;
  const { messages, ...summary } = view;
  const chunks = messages.length === 0 ? [] : [await new SessionMessages(kv).write(scope, view.id, messages)];
  await putIfAbsent(kv, ownerKey(scope.tenant, view.id), scope.agent);
  await putIfAbsent(
    kv,
    sessionKey(scope, view.id),
    JSON.stringify({ ...summary, first_message: firstMessageText(messages[0]), chunks }),
  );
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
      const [m, messages, skills, lease, ttl] = (await redis
        .multi()
        .hgetall(meta)
        .lrange(`${base}:messages`, 0, -1)
        .smembers(`${base}:skills`)
        .get(`${base}:lease`)
        .pttl(`${base}:lease`)
        .exec())!.map(([, v]) => v) as [Record<string, string>, string[], string[], string | null, number];
      if (Object.keys(m).length > 0) {
        const parsed = messages.map((text) => JSON.parse(text) as SessionView['messages'][number]);
        await adopt(kv, scope, {
          id,
          agent,
          version: Number(m.version ?? 0),
          message_count: parsed.length,
          active_skill: json(m.active_skill, null),
          loaded_skills: [...skills].sort(),
          metadata: json(m.metadata, {}),
          tokens: json(m.tokens, null),
          first_message: null,
          created_at: m.created_at!,
          updated_at: m.updated_at!,
          messages: parsed,
          fence: Number(m.fence ?? 0),
        });
        const held = lease && /^(\d+):(.*)$/.exec(lease);
        if (held && ttl > 0) {
          const stored = { owner: held[2], token: Number(held[1]), expiresAt: Date.now() + ttl };
          await putIfAbsent(kv, leaseKey(scope, id), JSON.stringify(stored));
        }
        moved++;
      }
      await redis
        .multi()
        .del(meta, `${base}:messages`, `${base}:skills`, `${base}:lease`)
        .zrem(`${prefix}sessions:${segment}:${agent}`, id)
        .hdel(`${prefix}session-owners:${segment}`, id)
        .exec();
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
        let view: SessionView;
        try {
          view = JSON.parse(text) as SessionView;
        } catch {
          // A corrupt file stays where it is (it was unreadable before, too); the others move.
          continue;
        }
        await adopt(
          kv,
          { tenant: decodeURIComponent(segment), agent },
          { ...view, id: name.slice(0, -'.json'.length) },
        );
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
