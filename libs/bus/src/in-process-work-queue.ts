import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import type { LineLogger } from '#logging';
import { JsonlLog } from '#files';
import {
  checkJobPayload,
  drainJobs,
  handedBack,
  reportDead,
  runJob,
  type ConsumeOptions,
  type Consuming,
  type JobHandler,
  type QueueDef,
  type WorkQueue,
} from './queue.js';
import { sanitizeStreamName } from './subject.js';
import { trackQueueDepth } from './bus-metrics.js';

type JobRecord = { readonly op: 'job'; readonly id: string; readonly payload: unknown; readonly correlationId: string };
type QueueRecord =
  | JobRecord
  | { readonly op: 'done'; readonly id: string; readonly outcome: 'ack' | 'dead'; readonly reason?: string };

/** Settled jobs the log may hold before it is compacted to the unsettled ones (JetStream's work-queue retention). */
export const QUEUE_COMPACT_AFTER = 1_000;

interface Job {
  readonly id: string;
  readonly payload: unknown;
  readonly correlationId: string;
  attempt: number;
  readyAt: number;
}

interface Consumer<P extends z.ZodType> {
  readonly handler: JobHandler<P>;
  readonly options: ConsumeOptions;
  /** Running deliveries, each with the function that hands its job back. */
  readonly running: Map<Promise<void>, () => void>;
  /** Stops sampling the queue depth for /metrics. */
  readonly untrack: () => void;
}

/**
 * A work queue persisted as a JSONL log of jobs and their settlements: jobs not settled when the
 * process stops run again after a restart (attempt counts restart with them). Like a JetStream work queue, which
 * drops a message once it is acknowledged, the log is compacted to its unsettled jobs once `compactAfter` settled
 * jobs piled up, so it stays bounded by the work in hand, not by all work ever done. The message ids it deduplicates
 * by are those of the jobs in the log: a compaction forgets the settled ones, as JetStream forgets ids past its
 * duplicate window.
 */
export class InProcessWorkQueue<P extends z.ZodType> implements WorkQueue<P> {
  private readonly log: JsonlLog<QueueRecord>;
  private readonly loaded: Promise<void>;
  /** The message ids a repeated enqueue is checked against: those of the jobs in the log. */
  private readonly ids = new Set<string>();
  private readonly waiting: Job[] = [];
  private consumer?: Consumer<P>;
  private timer?: NodeJS.Timeout;
  /** Unsettled jobs' records, in enqueue order: what a compaction keeps. */
  private readonly unsettled = new Map<string, JobRecord>();
  /** Settled jobs in the log (a settlement and its job record each). */
  private settled = 0;
  private compacting?: Promise<void>;

  constructor(
    readonly def: QueueDef<P>,
    dir: string,
    private readonly logger: LineLogger,
    private readonly compactAfter = QUEUE_COMPACT_AFTER,
  ) {
    this.log = new JsonlLog(join(dir, `${sanitizeStreamName(def.name)}.jsonl`));
    this.loaded = this.load();
  }

  async enqueue(payload: z.input<P>, options: { msgId: string; context?: { correlationId: string } }): Promise<void> {
    checkJobPayload(this.def, payload);
    await this.loaded;
    const { ids } = this;
    if (ids.has(options.msgId)) return;
    ids.add(options.msgId);
    const correlationId = options.context?.correlationId ?? randomUUID();
    const json = JSON.parse(JSON.stringify(payload)) as unknown;
    const record: JobRecord = { op: 'job', id: options.msgId, payload: json, correlationId };
    this.unsettled.set(record.id, record); // before the append: a compaction queued behind it must keep it
    try {
      await this.log.append(record);
    } catch (err) {
      ids.delete(options.msgId);
      this.unsettled.delete(record.id);
      throw err;
    }
    this.waiting.push({ id: options.msgId, payload: json, correlationId, attempt: 0, readyAt: Date.now() });
    this.pump();
  }

  async consume(handler: JobHandler<P>, options: ConsumeOptions = {}): Promise<Consuming> {
    if (this.consumer) throw new Error(`queue ${this.def.name} already has a consumer in this process`);
    await this.loaded;
    const consumer: Consumer<P> = {
      handler,
      options,
      running: new Map(),
      untrack: trackQueueDepth(this.def.name, () => this.waiting.length),
    };
    this.consumer = consumer;
    this.pump();
    return { stop: (deadlineMs) => this.stopConsumer(consumer, deadlineMs) };
  }

  /** Stops the consumer and waits for its running jobs (see Consuming.stop). */
  async stop(deadlineMs?: number): Promise<void> {
    if (this.consumer) await this.stopConsumer(this.consumer, deadlineMs);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.compacting;
    await this.log.close();
  }

  /** How many settled jobs the log holds now (compaction drops them). */
  get settledInLog(): number {
    return this.settled;
  }

  /** How many message ids a repeated enqueue is checked against now (those of the jobs in the log). */
  async rememberedIds(): Promise<number> {
    await this.loaded;
    return this.ids.size;
  }

  private async stopConsumer(consumer: Consumer<P>, deadlineMs?: number): Promise<void> {
    if (this.consumer === consumer) this.consumer = undefined;
    consumer.untrack();
    clearTimeout(this.timer);
    await drainJobs(consumer.running, deadlineMs);
  }

  private async load(): Promise<void> {
    const records = await this.log.readAll();
    for (const r of records) {
      this.ids.add(r.id);
      if (r.op === 'job') this.unsettled.set(r.id, r);
      else if (this.unsettled.delete(r.id)) this.settled++;
    }
    for (const r of this.unsettled.values())
      this.waiting.push({ id: r.id, payload: r.payload, correlationId: r.correlationId, attempt: 0, readyAt: 0 });
    if (this.settled >= this.compactAfter || records.length > 2 * (this.unsettled.size + this.settled))
      await this.compact();
  }

  /** Rewrites the log with the unsettled jobs only; a failure leaves the old log, which is still correct. */
  private compact(): Promise<void> {
    this.compacting ??= this.log
      .rewrite(() => [...this.unsettled.values()])
      .then(() => {
        this.settled = 0;
        for (const id of this.ids) if (!this.unsettled.has(id)) this.ids.delete(id);
      })
      .catch((err: unknown) =>
        this.logger.warn({ queue: this.def.name, err: String(err) }, 'could not compact the queue log'),
      )
      .finally(() => (this.compacting = undefined));
    return this.compacting;
  }

  private pump(): void {
    const consumer = this.consumer;
    if (!consumer) return;
    const limit = Math.max(1, consumer.options.concurrency ?? 1);
    const now = Date.now();
    while (consumer.running.size < limit) {
      const index = this.waiting.findIndex((job) => job.readyAt <= now);
      if (index < 0) break;
      const [job] = this.waiting.splice(index, 1);
      const abort = new AbortController();
      const run = this.deliver(consumer, job!, abort.signal)
        .catch((err: unknown) =>
          this.logger.error({ queue: this.def.name, err: String(err) }, 'could not settle a job'),
        )
        .finally(() => {
          consumer.running.delete(run);
          this.pump();
        });
      consumer.running.set(run, () => {
        abort.abort(handedBack());
        // Back in line as if never delivered: the log still holds it open, so a restart runs it too.
        this.waiting.push({ ...job!, attempt: job!.attempt - 1, readyAt: 0 });
        this.pump();
      });
    }
    this.armTimer();
  }

  private armTimer(): void {
    clearTimeout(this.timer);
    if (!this.consumer || this.waiting.length === 0) return;
    const next = Math.min(...this.waiting.map((job) => job.readyAt));
    this.timer = setTimeout(() => this.pump(), Math.max(0, next - Date.now()));
  }

  private async deliver(consumer: Consumer<P>, job: Job, signal: AbortSignal): Promise<void> {
    job.attempt += 1;
    const ctx = { attempt: job.attempt, correlationId: job.correlationId, signal };
    const outcome = await runJob(this.def, consumer.handler, job.payload, ctx, this.logger);
    if (outcome.kind === 'handed-back') return; // waiting again
    if (outcome.kind === 'retry') {
      job.readyAt = Date.now() + outcome.delayMs;
      this.waiting.push(job);
      return;
    }
    const reason = outcome.kind === 'dead' ? outcome.reason : undefined;
    const record = this.unsettled.get(job.id);
    this.unsettled.delete(job.id); // before the append: a compaction queued behind it must drop it
    try {
      await this.log.append({ op: 'done', id: job.id, outcome: outcome.kind, ...(reason ? { reason } : {}) });
    } catch (err) {
      if (record) this.unsettled.set(job.id, record);
      throw err;
    }
    if (record && ++this.settled >= this.compactAfter) void this.compact();
    if (reason !== undefined) await reportDead(consumer.options, job.payload, reason, ctx, this.logger);
  }
}
