import type { Scope } from '#contracts';
import { AlfredError } from '#errors';
import { isKvConflict, keyToken, type KvEntry, type KvStore } from '#kv';
import { TERMINAL, type JobPatch, type JobRecord, type JobRepository } from './job.repository.js';

/** How long a job's record is kept after its last change, and how long a dedupe pointer may outlive a lost job. */
export const JOB_TTL_MS = 7 * 24 * 3_600_000;
export const ACTIVE_TTL_MS = 24 * 3_600_000;

/** The three buckets of job state: records (JOB_TTL_MS), dedupe pointers (ACTIVE_TTL_MS) and last runs (kept). */
export interface JobBuckets {
  readonly jobs: KvStore;
  readonly active: KvStore;
  readonly last: KvStore;
  /** Closes what the buckets share (a connection), after the buckets. */
  readonly close?: () => Promise<void>;
}

const MAX_CAS_ATTEMPTS = 50;
const decode = (e: KvEntry) => JSON.parse(e.value) as JobRecord;
export const jobKey = (id: string) => keyToken(id);
export const lastKey = (s: Scope) => `${keyToken(s.tenant)}.${keyToken(s.agent)}`;

/**
 * Jobs in key-value buckets (Redis distributed, files embedded). Every change of a job is a compare-and-set on its
 * record, which holds the newest fencing token: a claim and a fenced write compare the same value in one step, so a
 * delivery that a newer claim took over can never write after it. The dedupe pointer is created only where absent and
 * swapped only from the finished job it named.
 */
export class KvJobRepository implements JobRepository {
  constructor(private readonly buckets: JobBuckets) {}

  async submit(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    const active = keyToken(job.dedupe_key);
    await this.buckets.jobs.put(jobKey(job.job_id), JSON.stringify(job));
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const pointer = await this.buckets.active.get(active);
      const current = pointer ? await this.get(pointer.value) : undefined;
      if (current && !TERMINAL.has(current.status)) {
        await this.buckets.jobs.delete(jobKey(job.job_id));
        return { job: current, created: false };
      }
      try {
        await this.buckets.active.put(active, job.job_id, { expected: pointer?.revision ?? 0 });
        return { job, created: true };
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new Error(`could not claim dedupe key ${job.dedupe_key}`);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const entry = await this.buckets.jobs.get(jobKey(id));
    return entry && decode(entry);
  }

  async claim(id: string): Promise<number | undefined> {
    let fence: number | undefined;
    await this.change(id, (job) => {
      fence = undefined;
      if (TERMINAL.has(job.status)) return undefined;
      fence = (job.fence ?? 0) + 1;
      return { ...job, fence };
    });
    return fence;
  }

  async update(id: string, patch: JobPatch, fence?: number): Promise<JobRecord | undefined> {
    return this.change(id, (job) => {
      if (fence !== undefined && fence < (job.fence ?? 0))
        throw AlfredError.leaseLost('job', id, fence, job.fence ?? 0);
      return { ...job, ...patch, updated_at: new Date().toISOString() };
    });
  }

  async release(dedupeKey: string, id: string): Promise<void> {
    const active = keyToken(dedupeKey);
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const pointer = await this.buckets.active.get(active);
      if (pointer?.value !== id) return;
      try {
        await this.buckets.active.delete(active, { expected: pointer.revision });
        return;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
  }

  async lastRun(scope: Scope): Promise<string | undefined> {
    return (await this.buckets.last.get(lastKey(scope)))?.value;
  }

  async setLastRun(scope: Scope, at: string): Promise<void> {
    await this.buckets.last.put(lastKey(scope), at);
  }

  async close(): Promise<void> {
    await Promise.all([this.buckets.jobs.close(), this.buckets.active.close(), this.buckets.last.close()]);
    await this.buckets.close?.();
  }

  /**
   * Compare-and-set of a job's record: `next` gives the new record (undefined: leave it), read again and retried when
   * another change landed in between. Undefined when the job does not exist (or `next` left it).
   */
  private async change(id: string, next: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.buckets.jobs.get(jobKey(id));
      if (!entry) return undefined;
      const changed = next(decode(entry));
      if (!changed) return undefined;
      try {
        await this.buckets.jobs.put(jobKey(id), JSON.stringify(changed), { expected: entry.revision });
        return changed;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_CAS_ATTEMPTS) throw err;
      }
    }
  }
}
