import { join } from 'node:path';
import { FileKvStore } from '#files';
import { moveEarlierData, type MoveLog } from '#kv';
import { createRedis, RedisKvStore } from '#redis';
import { moveFileAgentFiles, moveRedisAgentFiles } from './agent-file.migration.js';
import type { AgentFileStore } from './agent-file-store.js';
import { KvAgentFileStore } from './kv-agent-file.store.js';

export interface AgentFileStoreConfig {
  /** Set in the distributed shape: agent files live in Redis, reachable by every instance. */
  readonly REDIS_URL?: string;
  readonly ALFRED_REDIS_PREFIX?: string;
  /** Embedded shape: files under the data dir. */
  readonly ALFRED_DATA_DIR: string;
}

/** The agent files' bucket (before the Redis key prefix; the data dir's `kv/<bucket>` folder embedded). */
export const AGENT_FILES_BUCKET = 'agent-files';

/**
 * The agent-file store a service's config asks for: Redis when REDIS_URL is set, else files under the data dir. What
 * an earlier version kept in its own layout is moved in first (every opener may do so at once: each file lands once).
 */
export async function createAgentFileStore(config: AgentFileStoreConfig, log?: MoveLog): Promise<AgentFileStore> {
  if (!config.REDIS_URL) {
    const kv = new FileKvStore(join(config.ALFRED_DATA_DIR, 'kv', AGENT_FILES_BUCKET));
    await moveEarlierData(log, 'agent files', () => moveFileAgentFiles(config.ALFRED_DATA_DIR, kv));
    return new KvAgentFileStore(kv);
  }
  const keyPrefix = config.ALFRED_REDIS_PREFIX ?? 'alfred:';
  const redis = createRedis(config.REDIS_URL, 'agent-files');
  await moveEarlierData(log, 'agent files', () =>
    moveRedisAgentFiles(redis, keyPrefix, new RedisKvStore(redis, AGENT_FILES_BUCKET, { keyPrefix })),
  );
  await redis.quit().catch(() => redis.disconnect());
  return new KvAgentFileStore(new RedisKvStore(config.REDIS_URL, AGENT_FILES_BUCKET, { keyPrefix }));
}
