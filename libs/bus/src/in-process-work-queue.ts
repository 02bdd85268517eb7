import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import type { BusLogger } from './codec.js';
import { JsonlLog } from './jsonl-log.js';
import {
  checkJobPayload,
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

type QueueRecord =
  | { readonly op: 'job'; readonly id: string; readonly payload: unknown; readonly correlationId: string }
  | { readonly op: 'done'; readonly id: string; readonly outcome: 'ack' | 'dead'; readonly reason?: string };

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
  readonly running: Set<Promise<void>>;
  /** Stops sampling the queue depth for /metrics. */
  readonly untrack: () => void;
}

/**
 * A work queue persisted as a JSONL log of jobs and their settlements: jobs not settled when the
 * process stops run again after a restart (attempt counts restart with them).
 */
export class InProcessWorkQueue<P extends z.ZodType> implements WorkQueue<P> {
  private readonly log: JsonlLog<QueueRecord>;
  private readonly loaded: Promise<Set<string>>;
  private readonly waiting: Job[] = [];
  private consumer?: Consumer<P>;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly def: QueueDef<P>,
    dir: string,
    private readonly logger: BusLogger,
  ) {
    this.log = new JsonlLog(join(dir, `${sanitizeStreamName(def.name)}.jsonl`));
    this.loaded = this.load();
  }

  async enqueue(payload: z.input<P>, options: { msgId: string; context?: { correlationId: string } }): Promise<void> {
    checkJobPayload(this.def, payload);
    const ids = await this.loaded;
    if (ids.has(options.msgId)) return;
    ids.add(options.msgId);
    const correlationId = options.context?.correlationId ?? randomUUID();
    const json = JSON.parse(JSON.stringify(payload)) as unknown;
    try {
      await this.log.append({ op: 'job', id: options.msgId, payload: json, correlationId });
    } catch (err) {
      ids.delete(options.msgId);
      throw err;
    }
    this.waiting.push({ id: options.msgId, payload: json, correlationId, attempt: 0, readyAt: Date.now() });
    this.pump();
  }

  async consume(handler: JobHandler<P>, options: ConsumeOptions = {}): Promise<Consuming> {
    if (this.consumer) throw new Error(`queue ${this.def.name} already has a consumer in this process`);
    await this.loaded;
    const consumer: Consumer<P> = { handler, options, running: new Set(), untrack: trackQueueDepth(this.def.name, () => this.waiting.length) };
    this.consumer = consumer;
    this.pump();
    return { stop: () => this.stopConsumer(consumer) };
  }

  /** Stops the consumer and waits for its running jobs. */
  async stop(): Promise<void> {
    if (this.consumer) await this.stopConsumer(this.consumer);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.log.close();
  }

  private async stopConsumer(consumer: Consumer<P>): Promise<void> {
    if (this.consumer === consumer) this.consumer = undefined;
    consumer.untrack();
    clearTimeout(this.timer);
    await Promise.all(consumer.running);
  }

  private async load(): Promise<Set<string>> {
    const records = await this.log.readAll();
    const open = new Map<string, Job>();
    for (const r of records) {
      if (r.op === 'job') open.set(r.id, { id: r.id, payload: r.payload, correlationId: r.correlationId, attempt: 0, readyAt: 0 });
      else open.delete(r.id);
    }
    this.waiting.push(...open.values());
    return new Set(records.map((r) => r.id));
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
      const run = this.deliver(consumer, job!)
        .catch((err: unknown) => this.logger.error({ queue: this.def.name, err: String(err) }, 'could not settle a job'))
        .finally(() => {
        consumer.running.delete(run);
        this.pump();
      });
      consumer.running.add(run);
    }
    this.armTimer();
  }

  private armTimer(): void {
    clearTimeout(this.timer);
    if (!this.consumer || this.waiting.length === 0) return;
    const next = Math.min(...this.waiting.map((job) => job.readyAt));
    this.timer = setTimeout(() => this.pump(), Math.max(0, next - Date.now()));
  }

  private async deliver(consumer: Consumer<P>, job: Job): Promise<void> {
    job.attempt += 1;
    const ctx = { attempt: job.attempt, correlationId: job.correlationId };
    const outcome = await runJob(this.def, consumer.handler, job.payload, ctx, this.logger);
    if (outcome.kind === 'retry') {
      job.readyAt = Date.now() + outcome.delayMs;
      this.waiting.push(job);
      return;
    }
    const reason = outcome.kind === 'dead' ? outcome.reason : undefined;
    await this.log.append({ op: 'done', id: job.id, outcome: outcome.kind, ...(reason ? { reason } : {}) });
    if (reason !== undefined) await reportDead(consumer.options, job.payload, reason, ctx, this.logger);
  }
}
