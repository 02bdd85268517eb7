import { join } from 'node:path';
import { FileKvStore } from '#files';
import { createRedis, RedisKvStore } from '#redis';
import { ACTIVE_TTL_MS, JOB_TTL_MS, type JobBuckets } from './kv-job.repository.js';

export interface JobStoreConfig {
  readonly REDIS_URL?: string;
  readonly ALFRED_REDIS_PREFIX: string;
  readonly ALFRED_DATA_DIR: string;
}

/** Where jobs live: Redis when REDIS_URL is set (one connection for the three buckets), else the data dir. */
export function jobBuckets(config: JobStoreConfig): JobBuckets {
  if (config.REDIS_URL) {
    const redis = createRedis(config.REDIS_URL, 'jobs');
    const keyPrefix = config.ALFRED_REDIS_PREFIX;
    return {
      jobs: new RedisKvStore(redis, 'jobs', { keyPrefix, ttlMs: JOB_TTL_MS }),
      active: new RedisKvStore(redis, 'jobs-active', { keyPrefix, ttlMs: ACTIVE_TTL_MS }),
      last: new RedisKvStore(redis, 'distill-last', { keyPrefix }),
      close: () =>
        redis.quit().then(
          () => undefined,
          () => redis.disconnect(),
        ),
    };
  }
  const dir = (bucket: string) => join(config.ALFRED_DATA_DIR, 'kv', bucket);
  return {
    jobs: new FileKvStore(dir('jobs'), { ttlMs: JOB_TTL_MS }),
    active: new FileKvStore(dir('jobs-active'), { ttlMs: ACTIVE_TTL_MS }),
    last: new FileKvStore(dir('distill-last')),
  };
}
