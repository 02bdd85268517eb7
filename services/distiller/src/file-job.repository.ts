import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Scope } from '#contracts';
import { AlfredError } from '#errors';
import { writeFileAtomic } from '#files';
import { TERMINAL, type JobPatch, type JobRecord, type JobRepository } from './job.repository.js';

/**
 * The embedded job store: one JSON file per job under `<dataDir>/jobs`, plus `state.json` for dedupe pointers
 * and last runs. Embedded Alfred is one process, so one in-process lock orders every change.
 */
export class FileJobRepository implements JobRepository {
  private readonly dir: string;
  private lock: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    this.dir = resolve(dataDir, 'jobs');
  }

  submit(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    return this.locked(async () => {
      const state = await this.state();
      const currentId = state.active[job.dedupe_key];
      const current = currentId ? await this.get(currentId) : undefined;
      if (current && !TERMINAL.has(current.status)) return { job: current, created: false };
      await this.put(job);
      state.active[job.dedupe_key] = job.job_id;
      await this.saveState(state);
      return { job, created: true };
    });
  }

  async get(id: string): Promise<JobRecord | undefined> {
    try {
      return JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')) as JobRecord;
    } catch {
      return undefined;
    }
  }

  claim(id: string): Promise<number | undefined> {
    return this.locked(async () => {
      const job = await this.get(id);
      if (!job || TERMINAL.has(job.status)) return undefined;
      const fence = (job.fence ?? 0) + 1;
      await this.put({ ...job, fence });
      return fence;
    });
  }

  update(id: string, patch: JobPatch, fence?: number): Promise<JobRecord | undefined> {
    return this.locked(async () => {
      const job = await this.get(id);
      if (!job) return undefined;
      if (fence !== undefined && fence < (job.fence ?? 0)) throw AlfredError.leaseLost('job', id, fence, job.fence ?? 0);
      const next = { ...job, ...patch, updated_at: new Date().toISOString() };
      await this.put(next);
      return next;
    });
  }

  release(dedupeKey: string, id: string): Promise<void> {
    return this.locked(async () => {
      const state = await this.state();
      if (state.active[dedupeKey] !== id) return;
      delete state.active[dedupeKey];
      await this.saveState(state);
    });
  }

  async lastRun(scope: Scope): Promise<string | undefined> {
    return (await this.state()).last[lastKey(scope)];
  }

  setLastRun(scope: Scope, at: string): Promise<void> {
    return this.locked(async () => {
      const state = await this.state();
      state.last[lastKey(scope)] = at;
      await this.saveState(state);
    });
  }

  async close(): Promise<void> {
    await this.lock.catch(() => undefined);
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async state(): Promise<{ active: Record<string, string>; last: Record<string, string> }> {
    try {
      return JSON.parse(await readFile(join(this.dir, 'state.json'), 'utf8'));
    } catch {
      return { active: {}, last: {} };
    }
  }

  private saveState(state: object) {
    return this.write('state.json', state);
  }

  private put(job: JobRecord) {
    return this.write(`${job.job_id}.json`, job);
  }

  private write(name: string, value: object): Promise<void> {
    return writeFileAtomic(join(this.dir, name), JSON.stringify(value));
  }
}

const lastKey = (s: Scope) => `${encodeURIComponent(s.tenant)}/${s.agent}`;
