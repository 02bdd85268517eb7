import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { keyToken, putIfAbsent } from '#kv';
import { createRedis } from '#redis';
import type { JobRecord } from './job.repository.js';
import { jobKey, lastKey, type JobBuckets } from './kv-job.repository.js';

/** Writes an earlier version's job state where absent (a newer record wins), keeping its fencing token. */
async function adopt(buckets: JobBuckets, job: JobRecord, fence: number): Promise<void> {
  await putIfAbsent(
    buckets.jobs,
    jobKey(job.job_id),
    JSON.stringify({ ...job, fence: Math.max(fence, job.fence ?? 0) }),
  );
}

/**
 * Moves the job state an earlier version kept in Redis (`job:<id>`, `job-fence:<id>`, `job-active:<key>`,
 * `distill-last:<tenant>:<agent>`) into the buckets; each old key is deleted only once its state is stored, so an
 * interrupted move is finished by the next start. Returns how many keys were moved.
 */
export async function moveRedisJobs(url: string, prefix: string, buckets: JobBuckets): Promise<number> {
  const redis = createRedis(url, 'jobs-migration');
  let moved = 0;
  const each = async (pattern: string, move: (key: string, value: string) => Promise<void>) => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}${pattern}`, 'COUNT', 200);
      cursor = next;
      for (const key of keys) {
        const value = await redis.get(key);
        if (value !== null) await move(key.slice(prefix.length), value);
        await redis.del(key);
        moved++;
      }
    } while (cursor !== '0');
  };
  try {
    await each('job:*', async (key, json) => {
      const id = key.slice('job:'.length);
      await adopt(buckets, JSON.parse(json) as JobRecord, Number((await redis.get(`${prefix}job-fence:${id}`)) ?? 0));
    });
    await each('job-fence:*', async () => undefined);
    await each('job-active:*', async (key, id) => {
      await putIfAbsent(buckets.active, keyToken(key.slice('job-active:'.length)), id);
    });
    await each('distill-last:*', async (key, at) => {
      const rest = key.slice('distill-last:'.length);
      const cut = rest.lastIndexOf(':');
      await putIfAbsent(
        buckets.last,
        lastKey({ tenant: decodeURIComponent(rest.slice(0, cut)), agent: rest.slice(cut + 1) }),
        at,
      );
    });
    return moved;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/**
 * Moves the jobs an earlier embedded version kept under `<dataDir>/jobs` (one file per job, `state.json` with the
 * dedupe pointers and last runs) into the buckets, removing each file once its state is stored.
 */
export async function moveFileJobs(dataDir: string, buckets: JobBuckets): Promise<number> {
  const dir = join(dataDir, 'jobs');
  const names: string[] = await readdir(dir).catch((err: NodeJS.ErrnoException) =>
    err.code === 'ENOENT' ? [] : Promise.reject(err),
  );
  let moved = 0;
  for (const name of names.filter((n) => n.endsWith('.json') && n !== 'state.json' && !n.startsWith('.'))) {
    await adopt(buckets, JSON.parse(await readFile(join(dir, name), 'utf8')) as JobRecord, 0);
    await rm(join(dir, name), { force: true });
    moved++;
  }
  if (names.includes('state.json')) {
    const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as {
      active?: Record<string, string>;
      last?: Record<string, string>;
    };
    for (const [key, id] of Object.entries(state.active ?? {})) await putIfAbsent(buckets.active, keyToken(key), id);
    for (const [scope, at] of Object.entries(state.last ?? {})) {
      const cut = scope.lastIndexOf('/');
      await putIfAbsent(
        buckets.last,
        lastKey({ tenant: decodeURIComponent(scope.slice(0, cut)), agent: scope.slice(cut + 1) }),
        at,
      );
    }
    await rm(join(dir, 'state.json'), { force: true });
    moved++;
  }
  return moved;
}
