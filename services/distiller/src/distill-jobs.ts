import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ErrorCode, JobId, type DistillBody, type DistillReply, type JobView, type Scope } from '#contracts';
import {
  PermanentError,
  queueDef,
  type Bus,
  type Consuming,
  type JobContext,
  type MessageContext,
  type WorkQueue,
} from '#bus';
import { AlfredError, isAlfredError, isLeaseLost } from '#errors';
import type { Logger } from '#logging';
import type { DistillerService } from './distiller.service.js';
import { ownedBy, toView, type JobRecord, type JobRepository } from './job.repository.js';

export const DistillJob = z.object({ job_id: JobId });

export interface DistillJobsOptions {
  /** How long POST /distill waits for the job before answering 202. */
  readonly waitMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: readonly number[];
  readonly concurrency: number;
  /**
   * How long after its worker's last heartbeat a delivery is given to another worker (the worker was killed): running
   * jobs heartbeat every third of it, to the queue and to the job's record, whose status shows `stalled` once two
   * beats are missed. Default: the queue's.
   */
  readonly ackWaitMs?: number;
}

/** The durable queue of distill jobs (JetStream work queue in NATS mode, a persisted log embedded). */
export function distillQueue(
  bus: Bus,
  options: Pick<DistillJobsOptions, 'maxAttempts' | 'backoffMs' | 'ackWaitMs'>,
): WorkQueue<typeof DistillJob> {
  return bus.queue(
    queueDef({
      name: 'distiller-jobs',
      stream: 'ALFRED_JOBS',
      subject: 'alfred.jobs.distill.v1',
      payload: DistillJob,
      maxDeliver: options.maxAttempts,
      backoffMs: options.backoffMs,
      ...(options.ackWaitMs ? { ackWaitMs: options.ackWaitMs } : {}),
    }),
  );
}

/** Identical requests of one agent on one day share a job while it is unfinished. */
export function dedupeKey(scope: Scope, req: DistillBody, day = new Date().toISOString().slice(0, 10)): string {
  const parts = [scope.tenant, scope.agent, req.scope, req.focus ?? '', req.since ?? '', day];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

/** Model errors retrying cannot fix are permanent; a rate limit is worth another try later. */
function classify(err: unknown): unknown {
  if (!isAlfredError(err)) return err;
  const permanent: string[] = [ErrorCode.ModelAuthFailed, ErrorCode.ModelNotConfigured];
  if (permanent.includes(err.code)) return new PermanentError(err.message, { cause: err });
  if (err.code === ErrorCode.RateLimited) return new Error(err.message, { cause: err });
  return err;
}

/** Submits distill jobs, waits briefly for them, runs them from the queue and reports their status. */
export class DistillJobs {
  private consuming?: Consuming;

  constructor(
    private readonly queue: WorkQueue<typeof DistillJob>,
    private readonly repo: JobRepository,
    private readonly distiller: DistillerService,
    private readonly logger: Logger,
    private readonly options: DistillJobsOptions,
  ) {}

  async submit(scope: Scope, request: DistillBody, context?: MessageContext): Promise<DistillReply> {
    const now = new Date().toISOString();
    const record: JobRecord = {
      job_id: `job-distill-${randomUUID().replaceAll('-', '')}`,
      kind: 'distill',
      tenant: scope.tenant,
      agent: scope.agent,
      dedupe_key: dedupeKey(scope, request),
      status: 'queued',
      attempts: 0,
      request,
      result: null,
      error: null,
      created_at: now,
      updated_at: now,
    };
    const { job, created } = await this.repo.submit(record);
    if (created) await this.enqueue(job, context);
    return this.awaitJob(job.job_id);
  }

  async view(scope: Scope, id: string): Promise<JobView> {
    const job = await this.repo.get(id);
    if (!ownedBy(job, scope)) throw AlfredError.notFound('job', id);
    const view = toView(job);
    const beat = job.heartbeat_at ? Date.parse(job.heartbeat_at) : undefined;
    // Two beats missed: its worker is gone, and the queue gives the job to another once the ack wait has passed.
    const stalled = view.status === 'running' && beat !== undefined && Date.now() - beat > 2 * this.heartbeatMs();
    return stalled ? { ...view, status: 'stalled' } : view;
  }

  private heartbeatMs(): number {
    return Math.max(100, Math.floor((this.options.ackWaitMs ?? this.queue.def.ackWaitMs) / 3));
  }

  async start(): Promise<void> {
    this.consuming = await this.queue.consume((p, ctx) => this.runJob(p.job_id, ctx), {
      concurrency: this.options.concurrency,
      onDead: (payload, reason) => this.fail(payload, reason),
    });
  }

  /**
   * Stops taking jobs and lets those running finish within `deadlineMs`; a job still running then is handed back to
   * the queue (another instance, or this one after a restart, runs it) and its model calls are abandoned.
   */
  async stop(deadlineMs?: number): Promise<void> {
    await this.consuming?.stop(deadlineMs);
  }

  private async enqueue(job: JobRecord, context?: MessageContext): Promise<void> {
    try {
      await this.queue.enqueue({ job_id: job.job_id }, { msgId: job.job_id, context });
    } catch (err) {
      await this.repo.update(job.job_id, {
        status: 'failed',
        error: `could not queue the job: ${(err as Error).message}`,
      });
      await this.repo.release(job.dedupe_key, job.job_id);
      throw err;
    }
  }

  private async awaitJob(id: string): Promise<DistillReply> {
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      const job = await this.repo.get(id);
      if (job?.status === 'completed' && job.result) return job.result;
      if (job?.status === 'failed') {
        throw new AlfredError(job.error_code ?? ErrorCode.Internal, `distillation failed: ${job.error}`, {
          job_id: id,
        });
      }
      if (Date.now() >= deadline) return { status: 'processing', job_id: id };
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
    }
  }

  /**
   * Runs one delivery under its own claim: every write carries the claim's fencing token, so a delivery that outlived
   * its ack wait (and was redelivered elsewhere) can no longer overwrite the newer one's status or result.
   */
  private async runJob(id: string, ctx: JobContext): Promise<void> {
    // Claimed first: a job that vanished or finished (even just now, by a delivery that outlived its ack wait) is not
    // claimed, so a redelivery is harmless; once claimed, the older delivery's writes are fenced out.
    const fence = await this.repo.claim(id);
    if (fence === undefined) return;
    const job = await this.repo.get(id);
    if (!job) return;
    try {
      await this.runClaimed(job, fence, ctx);
    } catch (err) {
      if (!isLeaseLost(err)) throw err;
      // A newer delivery owns the job: this one's work is dropped, and acknowledging it is right.
      this.logger.warn(
        { job_id: id, attempt: ctx.attempt },
        'distill job taken over by a newer delivery: result dropped',
      );
    }
  }

  private async runClaimed(job: JobRecord, fence: number, ctx: JobContext): Promise<void> {
    const id = job.job_id;
    const scope = { tenant: job.tenant, agent: job.agent };
    const now = () => new Date().toISOString();
    await this.repo.update(id, { status: 'running', attempts: ctx.attempt, heartbeat_at: now() }, fence);
    const signal = ctx.signal;
    const heartbeat = new JobHeartbeat(() => this.repo.update(id, { heartbeat_at: now() }, fence), this.heartbeatMs());
    try {
      const lastRun = await this.repo.lastRun(scope);
      const run = this.distiller.run({ scope, request: job.request, lastRun, context: ctx, signal });
      const result = await abortable(run, signal).finally(() => heartbeat.stop());
      await this.repo.update(id, { status: 'completed', result, error: null, error_code: null }, fence);
      await this.repo.setLastRun(scope, job.created_at);
      await this.repo.release(job.dedupe_key, id);
    } catch (err) {
      await heartbeat.stop();
      if (isLeaseLost(err)) throw err;
      const code = isAlfredError(err) ? err.code : ErrorCode.Internal;
      await this.repo.update(id, { status: 'queued', error: (err as Error).message, error_code: code }, fence);
      throw classify(err);
    }
  }

  private async fail(payload: unknown, reason: string): Promise<void> {
    const parsed = DistillJob.safeParse(payload);
    if (!parsed.success) return;
    const job = await this.repo.update(parsed.data.job_id, { status: 'failed', error: reason });
    if (job) await this.repo.release(job.dedupe_key, job.job_id);
    this.logger.warn({ job_id: parsed.data.job_id, reason }, 'distill job failed');
  }
}

/**
 * Writes the job's heartbeat to its record while it runs. stop() waits for a write in flight, so a beat never lands
 * after (and over) the job's final status.
 */
class JobHeartbeat {
  private readonly timer: NodeJS.Timeout;
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(beat: () => Promise<unknown>, everyMs: number) {
    this.timer = setInterval(() => (this.inFlight = beat().catch(() => undefined)), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}

/** Settles with the work, or rejects as soon as the signal aborts (the work then stops at its next check). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
