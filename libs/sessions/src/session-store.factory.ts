import { join } from 'node:path';
import { FileKvStore } from '#files';
import { MemoryKvStore, moveEarlierData, type MoveLog } from '#kv';
import { createRedis, RedisKvStore } from '#redis';
import { KvSessionStore } from './kv-session.store.js';
import { moveFileSessions, moveRedisSessions } from './session.migration.js';
import type { SessionStore } from './session-store.js';

export interface SessionStoreConfig {
  /** Set in the distributed shape: sessions live in Redis, reachable by every instance. */
  readonly REDIS_URL?: string;
  readonly ALFRED_REDIS_PREFIX?: string;
  /** Embedded shape: sessions are files under the data dir. */
  readonly ALFRED_DATA_DIR: string;
}

/** The sessions bucket (before the Redis key prefix; the data dir's `kv/<bucket>` folder embedded). */
export const SESSIONS_BUCKET = 'sessions';

/**
 * The session store a service's config asks for: Redis when REDIS_URL is set, else files under the data dir. What an
 * earlier version kept in its own layout is moved in first (every opener may do so at once: each session lands once).
 */
export async function createSessionStore(config: SessionStoreConfig, log?: MoveLog): Promise<SessionStore> {
  if (!config.REDIS_URL) {
    const kv = new FileKvStore(join(config.ALFRED_DATA_DIR, 'kv', SESSIONS_BUCKET));
    await moveEarlierData(log, 'sessions', () => moveFileSessions(config.ALFRED_DATA_DIR, kv));
    // One process: a lease lives as long as the process that holds it (a restart is not kept out by its own old lease).
    return new KvSessionStore(kv, new MemoryKvStore());
  }
  const keyPrefix = config.ALFRED_REDIS_PREFIX ?? 'alfred:';
  const redis = createRedis(config.REDIS_URL, 'sessions');
  await moveEarlierData(log, 'sessions', () =>
    moveRedisSessions(redis, keyPrefix, new RedisKvStore(redis, SESSIONS_BUCKET, { keyPrefix })),
  );
  await redis.quit().catch(() => redis.disconnect());
  return new KvSessionStore(new RedisKvStore(config.REDIS_URL, SESSIONS_BUCKET, { keyPrefix }));
}
