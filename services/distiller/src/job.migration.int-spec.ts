import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { jobBuckets } from './job-buckets.js';
import { moveFileJobs, moveRedisJobs } from './job.migration.js';
import type { JobRecord } from './job.repository.js';
import { KvJobRepository } from './kv-job.repository.js';

const describeRedis = await describeWithRedis();
const scope = { tenant: 'acme.corp', agent: 'jarvis' };
const record = (id: string, status: JobRecord['status']): JobRecord => ({
  job_id: id,
  kind: 'distill',
  tenant: scope.tenant,
  agent: scope.agent,
  dedupe_key: 'acme.corp/jarvis/all',
  status,
  attempts: 1,
  request: { scope: 'all' },
  result: null,
  error: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** What each earlier layout held reaches the buckets once, fencing tokens and dedupe pointers included. */
async function expectMoved(repo: KvJobRepository, fence: number): Promise<void> {
  expect(await repo.get('job-old-1')).toMatchObject({ status: 'running', fence });
  // The running job still holds its dedupe key, and the next claim fences out the earlier version's delivery.
  expect((await repo.submit({ ...record('job-new', 'queued') })).job.job_id).toBe('job-old-1');
  expect(await repo.claim('job-old-1')).toBe(fence + 1);
  expect(await repo.lastRun(scope)).toBe('2026-02-02T00:00:00.000Z');
}

describe(moveFileJobs.name, () => {
  it('should move the job files and state.json of an earlier embedded version, then remove them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-jobs-move-'));
    try {
      await mkdir(join(dir, 'jobs'));
      await writeFile(
        join(dir, 'jobs', 'job-old-1.json'),
        JSON.stringify({ ...record('job-old-1', 'running'), fence: 3 }),
      );
      const state = {
        active: { 'acme.corp/jarvis/all': 'job-old-1' },
        last: { [`${encodeURIComponent(scope.tenant)}/jarvis`]: '2026-02-02T00:00:00.000Z' },
      };
      await writeFile(join(dir, 'jobs', 'state.json'), JSON.stringify(state));
      const buckets = jobBuckets({ ALFRED_DATA_DIR: dir, ALFRED_REDIS_PREFIX: 'alfred:' });

      expect(await moveFileJobs(dir, buckets)).toBe(2);

      expect(await readdir(join(dir, 'jobs'))).toEqual([]);
      await expectMoved(new KvJobRepository(buckets), 3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeRedis(moveRedisJobs.name, () => {
  it("should move an earlier version's job keys into the buckets and delete them", async () => {
    const prefix = `it-${randomUUID().slice(0, 8)}:`;
    const redis = new Redis(testServers.redisUrl);
    const buckets = jobBuckets({
      REDIS_URL: testServers.redisUrl,
      ALFRED_REDIS_PREFIX: prefix,
      ALFRED_DATA_DIR: '/nonexistent',
    });
    try {
      await redis.set(`${prefix}job:job-old-1`, JSON.stringify(record('job-old-1', 'running')), 'EX', 3600);
      await redis.set(`${prefix}job-fence:job-old-1`, '4');
      await redis.set(`${prefix}job-active:acme.corp/jarvis/all`, 'job-old-1');
      await redis.set(`${prefix}distill-last:${encodeURIComponent(scope.tenant)}:jarvis`, '2026-02-02T00:00:00.000Z');

      expect(await moveRedisJobs(testServers.redisUrl, prefix, buckets)).toBe(4);

      expect(await redis.keys(`${prefix}job*`)).toEqual([]);
      expect(await redis.keys(`${prefix}distill-last:*`)).toEqual([]);
      await expectMoved(new KvJobRepository(buckets), 4);
      expect(await moveRedisJobs(testServers.redisUrl, prefix, buckets)).toBe(0);
    } finally {
      await new KvJobRepository(buckets).close();
      await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
      await redis.quit();
    }
  });
});
