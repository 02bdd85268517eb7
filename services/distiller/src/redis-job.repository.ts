import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import type { Scope } from '#contracts';
import { AlfredError } from '#errors';
import type { JobPatch, JobRecord, JobRepository } from './job.repository.js';
import { TERMINAL } from './job.repository.js';

const JOB_TTL_S = 7 * 24 * 3600;
const ACTIVE_TTL_S = 24 * 3600;

/** KEYS: active key. ARGV: expected id, new id, ttl. Swaps the pointer only if it still names the expected job. */
const SWAP = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** KEYS: job, fence. ARGV: ttl, then the finished statuses. Returns the next token, or 0 when the job is gone or finished. */
const CLAIM = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local status = cjson.decode(raw).status
for i = 2, #ARGV do if status == ARGV[i] then return 0 end end
local t = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return t`;
/** KEYS: job, fence. ARGV: job JSON, ttl, token or ''. Writes unless the token is older than the newest claim: {1} or {-1, newest}. */
const FENCED_PUT = `
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[3] ~= '' and tonumber(ARGV[3]) < newest then return {-1, newest} end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return {1}`;

/** Jobs as JSON strings with a week's TTL; the dedupe pointer is SET NX, swapped and released by scripts. */
export class RedisJobRepository implements JobRepository {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'alfred:',
  ) {
    this.redis = createRedis(url, 'jobs');
  }

  async submit(job: JobRecord): Promise<{ job: JobRecord; created: boolean }> {
    await this.put(job);
    const active = this.activeKey(job.dedupe_key);
    for (let i = 0; i < 5; i++) {
      if ((await this.redis.set(active, job.job_id, 'EX', ACTIVE_TTL_S, 'NX')) === 'OK') return { job, created: true };
      const currentId = await this.redis.get(active);
      const current = currentId ? await this.get(currentId) : undefined;
      if (current && !TERMINAL.has(current.status)) {
        await this.redis.del(this.jobKey(job.job_id));
        return { job: current, created: false };
      }
      if (currentId && (await this.redis.eval(SWAP, 1, active, currentId, job.job_id, ACTIVE_TTL_S)) === 1) return { job, created: true };
    }
    throw new Error(`could not claim dedupe key ${job.dedupe_key}`);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const raw = await this.redis.get(this.jobKey(id));
    return raw ? (JSON.parse(raw) as JobRecord) : undefined;
  }

  async claim(id: string): Promise<number | undefined> {
    const token = (await this.redis.eval(CLAIM, 2, this.jobKey(id), this.fenceKey(id), JOB_TTL_S, ...TERMINAL)) as number;
    return token > 0 ? token : undefined;
  }

  async update(id: string, patch: JobPatch, fence?: number): Promise<JobRecord | undefined> {
    const job = await this.get(id);
    if (!job) return undefined;
    const next = { ...job, ...patch, updated_at: new Date().toISOString() };
    const args = [JSON.stringify(next), JOB_TTL_S, fence === undefined ? '' : fence];
    const [ok, newest] = (await this.redis.eval(FENCED_PUT, 2, this.jobKey(id), this.fenceKey(id), ...args)) as number[];
    if (ok === -1) throw AlfredError.leaseLost('job', id, fence!, newest!);
    return next;
  }

  async release(dedupeKey: string, id: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.activeKey(dedupeKey), id);
  }

  async lastRun(scope: Scope): Promise<string | undefined> {
    return (await this.redis.get(this.lastKey(scope))) ?? undefined;
  }

  async setLastRun(scope: Scope, at: string): Promise<void> {
    await this.redis.set(this.lastKey(scope), at);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private put(job: JobRecord) {
    return this.redis.set(this.jobKey(job.job_id), JSON.stringify(job), 'EX', JOB_TTL_S);
  }

  private jobKey = (id: string) => `${this.prefix}job:${id}`;
  private fenceKey = (id: string) => `${this.prefix}job-fence:${id}`;
  private activeKey = (key: string) => `${this.prefix}job-active:${key}`;
  private lastKey = (s: Scope) => `${this.prefix}distill-last:${encodeURIComponent(s.tenant)}:${s.agent}`;
}
