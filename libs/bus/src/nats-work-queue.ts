import { randomUUID } from 'node:crypto';
import { AckPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, type JsMsg } from '@nats-io/jetstream';
import { headers as natsHeaders, nanos } from '@nats-io/transport-node';
import type { z } from 'zod';
import { trackQueueDepth } from './bus-metrics.js';
import { BusHeader } from './codec.js';
import { createRacing } from './jetstream-create.js';
import type { JetStreamContext } from './nats.bus.js';
import {
  checkJobPayload,
  drainJobs,
  handedBack,
  queueUnavailable,
  reportDead,
  runJob,
  type ConsumeOptions,
  type Consuming,
  type JobHandler,
  type QueueDef,
  type WorkQueue,
} from './queue.js';

const encoder = new TextEncoder();

/**
 * A JetStream work queue: a work-queue stream, one durable pull consumer per queue with explicit acks
 * and max_deliver; retries are naks with the queue's backoff, permanent failures are terminated.
 */
export class NatsWorkQueue<P extends z.ZodType> implements WorkQueue<P> {
  private readonly consumers = new Set<Consuming>();
  private readonly streamName: string;
  private readonly subject: string;

  constructor(
    readonly def: QueueDef<P>,
    private readonly ctx: JetStreamContext,
  ) {
    this.streamName = ctx.stream(def.stream);
    this.subject = ctx.subject(def.subject);
  }

  async enqueue(payload: z.input<P>, options: { msgId: string; context?: { correlationId: string } }): Promise<void> {
    checkJobPayload(this.def, payload);
    const h = natsHeaders();
    h.set(BusHeader.CorrelationId, options.context?.correlationId ?? randomUUID());
    try {
      await this.ensureStream();
      await this.ctx.js.publish(this.subject, encoder.encode(JSON.stringify(payload)), {
        msgID: options.msgId,
        headers: h,
      });
    } catch (err) {
      throw queueUnavailable(this.def, err);
    }
  }

  async consume(handler: JobHandler<P>, options: ConsumeOptions = {}): Promise<Consuming> {
    await this.ensureStream();
    await this.ensureConsumer();
    const concurrency = Math.max(1, options.concurrency ?? 1);
    const consumer = await this.ctx.js.consumers.get(this.streamName, this.def.name);
    const messages = await consumer.consume({ max_messages: concurrency });
    const untrack = trackQueueDepth(this.def.name, async () => (await consumer.info(true)).num_pending);
    const running = new Map<Promise<void>, () => void>();
    let stopped!: () => void;
    const stopping = new Promise<void>((resolve) => (stopped = resolve));
    const loop = (async () => {
      for await (const msg of messages) {
        const abort = new AbortController();
        const run = this.settle(msg, handler, options, abort.signal)
          .catch((err: unknown) =>
            this.ctx.logger.error({ queue: this.def.name, err: String(err) }, 'could not settle a job'),
          )
          .finally(() => running.delete(run));
        running.set(run, () => {
          abort.abort(handedBack());
          msg.nak(); // redelivered at once to any consumer of the queue
        });
        // At capacity, wait for a job to end — or for stop(), which must not wait behind a job it may hand back.
        while (running.size >= concurrency)
          if ((await Promise.race([...running.keys(), stopping.then(() => 'stop' as const)])) === 'stop') return;
      }
    })();
    const consuming: Consuming = {
      stop: async (deadlineMs?: number) => {
        untrack();
        this.consumers.delete(consuming);
        stopped();
        await messages.close();
        await loop;
        await drainJobs(running, deadlineMs);
      },
    };
    this.consumers.add(consuming);
    return consuming;
  }

  /** Stops every consumer of this queue in this process, handing back the jobs still running after `deadlineMs`. */
  async stop(deadlineMs?: number): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.stop(deadlineMs)));
  }

  private ensureStream(): Promise<void> {
    return this.ctx.streams.ensure({
      name: this.streamName,
      subjects: [this.subject],
      retention: RetentionPolicy.Workqueue,
    });
  }

  private async ensureConsumer(): Promise<void> {
    const jsm = await this.ctx.jsm();
    const config = {
      ack_policy: AckPolicy.Explicit,
      max_deliver: this.def.maxDeliver,
      ack_wait: nanos(this.def.ackWaitMs),
      filter_subject: this.subject,
    };
    // Instances starting together each look, then update or add: an add that loses to another's is tried again.
    await createRacing(async () => {
      try {
        await jsm.consumers.info(this.streamName, this.def.name);
      } catch (err) {
        if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
        await jsm.consumers.add(this.streamName, { durable_name: this.def.name, ...config });
        return;
      }
      await jsm.consumers.update(this.streamName, this.def.name, config);
    });
  }

  private async settle(
    msg: JsMsg,
    handler: JobHandler<P>,
    options: ConsumeOptions,
    signal: AbortSignal,
  ): Promise<void> {
    const ctx = {
      signal,
      attempt: msg.info.deliveryCount,
      correlationId: msg.headers?.get(BusHeader.CorrelationId) || randomUUID(),
    };
    let raw: unknown;
    try {
      raw = msg.json();
    } catch {
      raw = msg.string();
    }
    // Keeps a long job from being redelivered while it still runs; a third of the ack wait leaves room for two beats
    // lost to a busy event loop. A killed worker's job is redelivered one ack wait after its last beat.
    const heartbeat = setInterval(() => msg.working(), Math.max(100, this.def.ackWaitMs / 3));
    const outcome = await runJob(this.def, handler, raw, ctx, this.ctx.logger).finally(() => clearInterval(heartbeat));
    if (outcome.kind === 'handed-back') return; // the queue has it again
    if (outcome.kind === 'ack') {
      await msg.ackAck();
    } else if (outcome.kind === 'retry') {
      msg.nak(outcome.delayMs);
    } else {
      msg.term(outcome.reason);
      await reportDead(options, raw, outcome.reason, ctx, this.ctx.logger);
    }
  }
}
