import type { ErrorCode, JobView, Scope } from '#contracts';

/** A job as stored: its view plus who owns it and what deduplicates it. */
export interface JobRecord extends JobView {
  readonly tenant: string;
  readonly dedupe_key: string;
  readonly error_code?: ErrorCode | null;
  /** The newest fencing token handed out for the job (kept in the record, so a claim and a write compare one value). */
  readonly fence?: number;
}

export type JobPatch = Partial<
  Pick<JobRecord, 'status' | 'attempts' | 'result' | 'error' | 'error_code' | 'heartbeat_at'>
>;

export const TERMINAL: ReadonlySet<JobView['status']> = new Set(['completed', 'failed']);

/**
 * Job status where every distiller instance reads it (Redis in the distributed shape, files embedded).
 * At most one unfinished job per dedupe key: `submit` returns the running one instead of a new one.
 */
export interface JobRepository {
  submit(job: JobRecord): Promise<{ job: JobRecord; created: boolean }>;
  get(id: string): Promise<JobRecord | undefined>;
  /**
   * Takes the job for one delivery: a fencing token newer than every earlier one; undefined when the job is gone or
   * already finished (checked in the same atomic step, so a delivery that ends it meanwhile is never run again).
   * A delivery that outlived its ack wait is redelivered elsewhere; the newer claim then fences the older one out.
   */
  claim(id: string): Promise<number | undefined>;
  /** With `fence`, refused by `AlfredError.leaseLost` (and nothing written) once a newer claim exists, atomically. */
  update(id: string, patch: JobPatch, fence?: number): Promise<JobRecord | undefined>;
  /** Frees the dedupe key once the job is finished (only if it still names this job). */
  release(dedupeKey: string, id: string): Promise<void>;
  /** When the agent's last distillation completed (the `recent` scope starts there). */
  lastRun(scope: Scope): Promise<string | undefined>;
  setLastRun(scope: Scope, at: string): Promise<void>;
  close(): Promise<void>;
}

export const JOB_REPOSITORY = Symbol('JOB_REPOSITORY');

/** A job is visible only in its own tenant and agent. */
export function ownedBy(job: JobRecord | undefined, scope: Scope): job is JobRecord {
  return job !== undefined && job.tenant === scope.tenant && job.agent === scope.agent;
}

export function toView(job: JobRecord): JobView {
  const { tenant: _t, dedupe_key: _d, error_code: _e, fence: _f, ...view } = job;
  return view;
}
