import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { deleteRedisKeysWithPrefix, describeWithRedis, testServers } from '#testing';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { RedisKvStore } from '#redis';
import type { JobRecord, JobRepository } from './job.repository.js';
import { KvJobRepository } from './kv-job.repository.js';

const describeRedis = await describeWithRedis();

const job = (dedupe: string): JobRecord => {
  const now = new Date().toISOString();
  return {
    job_id: `job-distill-${randomUUID().replaceAll('-', '')}`,
    kind: 'distill',
    tenant: 't',
    agent: 'a',
    dedupe_key: dedupe,
    status: 'queued',
    attempts: 0,
    request: { scope: 'all' },
    result: null,
    error: null,
    created_at: now,
    updated_at: now,
  };
};

function contract(name: string, open: () => Promise<{ repo: JobRepository; cleanup: () => Promise<void> }>) {
  describe(name, () => {
    let repo: JobRepository;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ repo, cleanup } = await open()));
    afterEach(async () => {
      await repo.close();
      await cleanup();
    });

    it('should hand out one unfinished job per dedupe key, even to concurrent submits', async () => {
      const results = await Promise.all([job('k'), job('k'), job('k')].map((j) => repo.submit(j)));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.job.job_id)).size).toBe(1);
    });

    it('should start a new job once the previous one finished', async () => {
      const first = await repo.submit(job('k2'));
      await repo.update(first.job.job_id, { status: 'completed' });
      const second = await repo.submit(job('k2'));
      expect(second.created).toBe(true);
      await repo.release('k2', second.job.job_id);
      expect((await repo.submit(job('k2'))).created).toBe(true);
    });

    it("should refuse the writes of a delivery that a newer claim took over, and keep the newer one's", async () => {
      const { job: j } = await repo.submit(job('k4'));
      const first = (await repo.claim(j.job_id))!;
      await repo.update(j.job_id, { status: 'running', attempts: 1 }, first);
      const second = (await repo.claim(j.job_id))!;
      await repo.update(j.job_id, { status: 'running', attempts: 2 }, second);

      const refused = repo.update(
        j.job_id,
        { status: 'completed', result: { status: 'completed', insights: [] } as never },
        first,
      );

      await expect(refused).rejects.toMatchObject({
        code: ErrorCode.Conflict,
        details: { reason: 'lease_lost', token: first, current_token: second },
      });
      expect(second).toBeGreaterThan(first);
      expect(await repo.get(j.job_id)).toMatchObject({ status: 'running', attempts: 2, result: null });
      await repo.update(j.job_id, { status: 'completed' }, second);
      expect(await repo.get(j.job_id)).toMatchObject({ status: 'completed' });
      expect(await repo.claim('job-distill-missing')).toBeUndefined();
    });

    it('should refuse to claim a finished job, so a late redelivery never runs it again', async () => {
      const { job: j } = await repo.submit(job('k5'));
      const token = (await repo.claim(j.job_id))!;
      await repo.update(j.job_id, { status: 'completed' }, token);

      expect(await repo.claim(j.job_id)).toBeUndefined();
      // The finished delivery's own token still writes.
      await repo.update(j.job_id, { status: 'failed', error: 'x' }, token);
      expect(await repo.claim(j.job_id)).toBeUndefined();
      expect(await repo.get(j.job_id)).toMatchObject({ status: 'failed' });
    });

    it('should keep updates and last runs', async () => {
      const { job: j } = await repo.submit(job('k3'));
      await repo.update(j.job_id, { status: 'running', attempts: 2 });
      expect(await repo.get(j.job_id)).toMatchObject({ status: 'running', attempts: 2 });
      expect(await repo.update('job-distill-missing', { status: 'failed' })).toBeUndefined();
      await repo.setLastRun({ tenant: 't', agent: 'a' }, '2026-01-01T00:00:00.000Z');
      expect(await repo.lastRun({ tenant: 't', agent: 'a' })).toBe('2026-01-01T00:00:00.000Z');
    });
  });
}

contract(`${KvJobRepository.name} on files`, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-jobs-'));
  const buckets = {
    jobs: new FileKvStore(join(dir, 'jobs')),
    active: new FileKvStore(join(dir, 'active')),
    last: new FileKvStore(join(dir, 'last')),
  };
  return { repo: new KvJobRepository(buckets), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

contract(`${KvJobRepository.name} in memory`, async () => {
  const buckets = { jobs: new MemoryKvStore(), active: new MemoryKvStore(), last: new MemoryKvStore() };
  return { repo: new KvJobRepository(buckets), cleanup: async () => undefined };
});

describeRedis('with Redis', () => {
  contract(`${KvJobRepository.name} on Redis`, async () => {
    const keyPrefix = `it-${randomUUID().slice(0, 8)}:`;
    const open = (bucket: string) => new RedisKvStore(testServers.redisUrl, bucket, { keyPrefix });
    const repo = new KvJobRepository({ jobs: open('jobs'), active: open('active'), last: open('last') });
    return { repo, cleanup: () => deleteRedisKeysWithPrefix(testServers.redisUrl, keyPrefix) };
  });
});
