import { ErrorCode } from '#contracts';
import { AlfredError, isAlfredError } from '#errors';
import type { z } from 'zod';
import type { MessageContext } from './bus.js';
import type { LineLogger } from '#logging';
import { parseWith } from './codec.js';
import { observeJob } from './bus-metrics.js';

/** A durable job queue: where jobs are stored and how failures are retried. */
export interface QueueDef<P extends z.ZodType = z.ZodType> {
  /** Durable consumer name (and in-process file name): one per queue. */
  readonly name: string;
  readonly stream: string;
  readonly subject: string;
  readonly payload: P;
  /** Deliveries before a job is given up as dead, the first included. */
  readonly maxDeliver: number;
  /** Delay before retry n (1-based: index n-1); the last entry repeats. */
  readonly backoffMs: readonly number[];
  /** How long a delivery may stay unacknowledged before it is redelivered. */
  readonly ackWaitMs: number;
}

export function queueDef<P extends z.ZodType>(
  def: Pick<QueueDef<P>, 'name' | 'stream' | 'subject' | 'payload'> & Partial<QueueDef<P>>,
): QueueDef<P> {
  return { maxDeliver: 5, backoffMs: [1_000, 5_000, 30_000, 120_000], ackWaitMs: 60_000, ...def };
}

export interface JobContext extends MessageContext {
  /** 1 on the first delivery. */
  readonly attempt: number;
  /** Aborted when the job is handed back to the queue (its consumer stopped before it finished): stop working on it. */
  readonly signal: AbortSignal;
}

export type JobHandler<P extends z.ZodType> = (payload: z.output<P>, ctx: JobContext) => Promise<void>;

export interface ConsumeOptions {
  readonly concurrency?: number;
  /** Called once for a job given up: permanently failed, invalid, or out of deliveries. */
  readonly onDead?: (payload: unknown, reason: string) => void | Promise<void>;
}

export interface Consuming {
  /**
   * Stops taking jobs and waits for those running, for at most `deadlineMs` (default: until they end); a job still
   * running then is handed back to the queue — redelivered at once, to this or another consumer — and its signal
   * aborted; whatever its handler does afterwards settles nothing.
   */
  stop(deadlineMs?: number): Promise<void>;
}

/** Waits for running jobs until the deadline; each still running then is handed back (its function called). */
export async function drainJobs(
  running: ReadonlyMap<Promise<void>, () => void>,
  deadlineMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  const all = Promise.allSettled([...running.keys()]).then(() => 'done' as const);
  if (!Number.isFinite(deadlineMs)) {
    await all;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, deadlineMs))));
  const first = await Promise.race([all, late]);
  clearTimeout(timer);
  if (first === 'late') for (const handBack of running.values()) handBack();
}

/** The reason a handed-back job's signal carries. */
export const handedBack = () =>
  new AlfredError(ErrorCode.ServiceUnavailable, 'the job was handed back to the queue: its consumer is stopping');

export interface WorkQueue<P extends z.ZodType = z.ZodType> {
  readonly def: QueueDef<P>;
  /**
   * Stores a job durably before resolving; a msgId repeated while the queue remembers it is stored once (NATS: the
   * stream's duplicate window; embedded: while its job is in the queue's log, until a compaction drops it settled).
   */
  enqueue(payload: z.input<P>, options: { msgId: string; context?: MessageContext }): Promise<void>;
  consume(handler: JobHandler<P>, options?: ConsumeOptions): Promise<Consuming>;
}

/** Marks a job failure that retrying cannot fix. */
export class PermanentError extends Error {
  readonly permanent = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** Client errors (4xx) and errors marked permanent are not retried. */
export function isPermanent(err: unknown): boolean {
  if (isAlfredError(err)) return err.status < 500;
  return typeof err === 'object' && err !== null && (err as { permanent?: unknown }).permanent === true;
}

export type JobOutcome =
  | { readonly kind: 'ack' }
  | { readonly kind: 'dead'; readonly reason: string }
  | { readonly kind: 'retry'; readonly delayMs: number }
  /**
   * Its consumer stopped and gave it back (the signal aborted): the queue has it again, nothing to settle or report.
   */
  | { readonly kind: 'handed-back' };

export function retryDelay(def: QueueDef, attempt: number): number {
  if (def.backoffMs.length === 0) return 0;
  return def.backoffMs[Math.min(attempt - 1, def.backoffMs.length - 1)]!;
}

/** Validates a job's payload before it is stored. */
export function checkJobPayload<P extends z.ZodType>(def: QueueDef<P>, payload: unknown): void {
  parseWith(def.payload, payload);
}

/**
 * Runs one delivery of a job and decides its fate; both adapters settle messages from this (and it is measured here).
 */
export async function runJob<P extends z.ZodType>(
  def: QueueDef<P>,
  handler: JobHandler<P>,
  raw: unknown,
  ctx: JobContext,
  logger: LineLogger,
): Promise<JobOutcome> {
  const outcome = await judgeJob(def, handler, raw, ctx, logger);
  observeJob(def.name, ctx.attempt, outcome);
  return outcome;
}

async function judgeJob<P extends z.ZodType>(
  def: QueueDef<P>,
  handler: JobHandler<P>,
  raw: unknown,
  ctx: JobContext,
  logger: LineLogger,
): Promise<JobOutcome> {
  let payload: z.output<P>;
  try {
    payload = parseWith(def.payload, raw);
  } catch (err) {
    return { kind: 'dead', reason: `invalid job payload: ${(err as Error).message}` };
  }
  try {
    await handler(payload, ctx);
    return ctx.signal.aborted ? { kind: 'handed-back' } : { kind: 'ack' };
  } catch (err) {
    if (ctx.signal.aborted) return { kind: 'handed-back' }; // stopped because it was handed back: not a failure
    const message = err instanceof Error ? err.message : String(err);
    if (isPermanent(err)) return { kind: 'dead', reason: `permanent failure: ${message}` };
    logger.warn(
      { correlationId: ctx.correlationId, queue: def.name, attempt: ctx.attempt, err: message },
      'job failed',
    );
    if (ctx.attempt >= def.maxDeliver)
      return { kind: 'dead', reason: `gave up after ${ctx.attempt} attempts: ${message}` };
    return { kind: 'retry', delayMs: retryDelay(def, ctx.attempt) };
  }
}

/** Calls onDead without letting its failure stop the consumer. */
export async function reportDead(
  options: ConsumeOptions,
  payload: unknown,
  reason: string,
  ctx: JobContext,
  logger: LineLogger,
): Promise<void> {
  logger.error({ correlationId: ctx.correlationId, reason, attempt: ctx.attempt }, 'job is dead');
  try {
    await options.onDead?.(payload, reason);
  } catch (err) {
    logger.error({ correlationId: ctx.correlationId, err: String(err) }, 'onDead callback failed');
  }
}

export const queueUnavailable = (def: QueueDef, cause: unknown) =>
  new AlfredError(ErrorCode.ServiceUnavailable, `could not store a job on queue ${def.name}`, undefined, { cause });
