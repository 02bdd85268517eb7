import { randomUUID } from 'node:crypto';
import {
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type Consumer,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import {
  connect,
  headers as natsHeaders,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type NatsConnection,
} from '@nats-io/transport-node';
import {
  ErrorCode,
  type EventDef,
  type PayloadOf,
  type RequestOf,
  type ResponseOf,
  type Route,
  type TopicDef,
  type TopicPayloadOf,
} from '#contracts';
import { AlfredError } from '#errors';
import type { z } from 'zod';
import type {
  Bus,
  EventHandler,
  EventSubscription,
  Handler,
  PublishOptions,
  RequestOptions,
  ServeOptions,
  Served,
  StoredEvent,
  TopicOptions,
  TopicSubscription,
} from './bus.js';
import { consoleLogger, type LineLogger } from '#logging';
import { Backoff, retry, type BackoffOptions } from '#retry';
import {
  BusHeader,
  decodeReply,
  deliverEvent,
  envelope,
  handleRequest,
  parseDeadline,
  parseWith,
  timedOut,
  unavailable,
} from './codec.js';
import { isStreamNotFound, JetStreamStreams } from './jetstream-streams.js';
import { NatsWorkQueue } from './nats-work-queue.js';
import { observedRequest } from './bus-metrics.js';
import type { QueueDef, WorkQueue } from './queue.js';
import { keyedSubject, sanitizeStreamName, streamSubjectFor } from './subject.js';
import { TopicBuffer } from './topic-subscription.js';
import { ConnectionWatch, type ConnectionState } from './connection-watch.js';

export interface NatsBusOptions {
  /**
   * One server, or every server of a cluster (a list, or one string comma-separated): the client moves between them.
   */
  readonly url: string | readonly string[];
  /**
   * Copies of each stream and KV bucket this bus creates (JetStream `num_replicas`): 1 on one server, 3 on a
   * three-node cluster. Default 1.
   */
  readonly replicas?: number;
  /** How long event streams keep events (JetStream max_age); 0 or absent: for ever. */
  readonly eventsMaxAgeMs?: number;
  /** Connection name shown by the server (service and instance). */
  readonly name: string;
  /** Prepended to every subject and (sanitized) to every stream name, to isolate tests or deployments. */
  readonly subjectPrefix?: string;
  readonly defaultTimeoutMs?: number;
  readonly logger?: LineLogger;
  /** Reconnect backoff: capped exponential with full jitter; reconnect attempts are never exhausted. */
  readonly reconnect?: BackoffOptions;
  /**
   * Called once when the connection is closed for good without close() having been asked for (the server refused
   * us, or the client gave up): a process should exit non-zero so that its supervisor restarts it.
   */
  readonly onClosed?: (err: Error | undefined) => void;
}

/** What the NATS work queue needs from the bus that owns it. */
export interface JetStreamContext {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: () => Promise<JetStreamManager>;
  readonly streams: JetStreamStreams;
  readonly logger: LineLogger;
  subject(subject: string): string;
  stream(name: string): string;
}

const encoder = new TextEncoder();

/** The client's name for a publish that no stream stored (no stream listens to its subject). */
const notStored = (err: unknown) => (err as Error | undefined)?.name === 'JetStreamNotEnabled';

/** The servers of a NATS_URL: a list, or one string with the servers comma-separated. */
export function natsServers(url: string | readonly string[]): string[] {
  const list = typeof url === 'string' ? url.split(',') : [...url];
  return list.map((s) => s.trim()).filter(Boolean);
}

/** The distributed bus: NATS core request/reply in queue groups, JetStream for events and work queues. */
export class NatsBus implements Bus, JetStreamContext {
  readonly kind = 'nats' as const;
  readonly js: JetStreamClient;
  readonly streams: JetStreamStreams;
  readonly logger: LineLogger;
  private readonly served = new Set<Served>();
  private readonly queues = new Map<string, NatsWorkQueue<z.ZodType>>();
  private readonly listeners = new Set<TopicBuffer<unknown>>();
  private readonly prefix: string;
  private readonly defaultTimeoutMs: number;
  private manager?: Promise<JetStreamManager>;
  private readonly link: ConnectionWatch;
  /** Copies of each stream and KV bucket created through this bus (num_replicas). */
  readonly replicas: number;

  private constructor(
    readonly nc: NatsConnection,
    options: NatsBusOptions,
    backoff: Backoff,
  ) {
    this.prefix = options.subjectPrefix ?? '';
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 5_000;
    this.logger = options.logger ?? consoleLogger;
    this.js = jetstream(nc);
    this.replicas = options.replicas ?? 1;
    this.streams = new JetStreamStreams(() => this.jsm(), this.replicas, options.eventsMaxAgeMs ?? 0);
    this.link = new ConnectionWatch(nc, this.logger, backoff, options.onClosed);
  }

  /**
   * Connects, waiting for the server if it is not up yet. The connection never stops trying to reconnect
   * (jittered backoff); while it is away, requests and publishes fail at once with SERVICE_UNAVAILABLE.
   */
  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const backoff = new Backoff(options.reconnect);
    const nc = await connect({
      servers: natsServers(options.url),
      name: options.name,
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => backoff.next(),
    });
    return new NatsBus(nc, options, backoff);
  }

  isConnected(): boolean {
    return this.link.state === 'connected' && !this.nc.isDraining();
  }

  connectionState(): ConnectionState {
    return this.link.state;
  }

  jsm(): Promise<JetStreamManager> {
    this.manager ??= jetstreamManager(this.nc);
    return this.manager;
  }

  subject(subject: string): string {
    return `${this.prefix}${subject}`;
  }

  stream(name: string): string {
    return sanitizeStreamName(`${this.prefix}${name}`);
  }

  request<R extends Route>(route: R, payload: RequestOf<R>, options?: RequestOptions): Promise<ResponseOf<R>> {
    return observedRequest(route.subject, () => this.send(route, payload, options));
  }

  private async send<R extends Route>(
    route: R,
    payload: RequestOf<R>,
    options?: RequestOptions,
  ): Promise<ResponseOf<R>> {
    const env = envelope(route, payload, options, this.defaultTimeoutMs);
    this.link.assertConnected(`request ${route.subject}`);
    const h = natsHeaders();
    h.set(BusHeader.CorrelationId, env.correlationId);
    h.set(BusHeader.Deadline, String(env.deadline));
    if (env.idempotencyKey) h.set(BusHeader.IdempotencyKey, env.idempotencyKey);
    let reply: Msg;
    try {
      reply = await this.nc.request(this.subject(route.subject), encoder.encode(env.data), {
        timeout: env.timeoutMs,
        headers: h,
      });
    } catch (err) {
      throw this.requestFailure(route, env.timeoutMs, err);
    }
    return decodeReply(route, { data: reply.string(), isError: reply.headers?.get(BusHeader.Error) === '1' });
  }

  serve<R extends Route>(route: R, handler: Handler<R>, options?: ServeOptions): Served {
    const inFlight = new Set<Promise<void>>();
    const respond = async (msg: Msg) => {
      const ctx = {
        correlationId: msg.headers?.get(BusHeader.CorrelationId) || randomUUID(),
        deadline: parseDeadline(msg.headers?.get(BusHeader.Deadline)),
        idempotencyKey: msg.headers?.get(BusHeader.IdempotencyKey) || undefined,
      };
      const reply = await handleRequest(route, handler, msg.string(), ctx, this.logger);
      const h = natsHeaders();
      h.set(BusHeader.CorrelationId, ctx.correlationId);
      if (reply.isError) h.set(BusHeader.Error, '1');
      if (!msg.respond(encoder.encode(reply.data), { headers: h })) {
        this.logger.warn({ correlationId: ctx.correlationId, subject: route.subject }, 'request had no reply subject');
      }
    };
    const sub = this.nc.subscribe(this.subject(route.subject), {
      queue: options?.queue ?? route.service,
      callback: (err, msg) => {
        if (err) return this.logger.error({ subject: route.subject, err: String(err) }, 'subscription failed');
        const run = respond(msg).catch((e: unknown) =>
          this.logger.error({ subject: route.subject, err: String(e) }, 'could not send a reply'),
        );
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      },
    });
    const served: Served = {
      drain: async () => {
        this.served.delete(served);
        if (!sub.isClosed() && !this.nc.isClosed()) await sub.drain();
        await Promise.allSettled([...inFlight]);
      },
    };
    this.served.add(served);
    return served;
  }

  async publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void> {
    const parsed = parseWith(event.payload, payload);
    const subject = this.subject(keyedSubject(event.subject, options.key));
    this.link.assertConnected(`store event ${subject}`);
    const stream = { name: this.stream(event.stream), subjects: [this.subject(streamSubjectFor(event))] };
    const data = encoder.encode(JSON.stringify(parsed));
    try {
      await this.streams.ensure(stream);
      // No stream answers the subject when another instance's update of the stream took it away again (instances
      // widening one stream at once): look again, add it back, publish again — until the updates settle.
      await retry(
        async (attempt) => {
          if (attempt > 1) await this.streams.ensure(stream, { again: true });
          return this.js.publish(subject, data, { msgID: options.msgId });
        },
        { attempts: 5, retryIf: notStored, backoff: { baseMs: 20, maxMs: 200 } },
      );
    } catch (err) {
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        `could not store event ${subject} on ${event.stream}`,
        undefined,
        {
          cause: err,
        },
      );
    }
  }

  async *readEvents(stream: string, filter: string): AsyncIterable<StoredEvent> {
    const name = this.stream(stream);
    let consumer: Consumer;
    try {
      consumer = await this.js.consumers.get(name, {
        filter_subjects: this.subject(filter),
        deliver_policy: DeliverPolicy.All,
      });
      if ((await consumer.info(true)).num_pending === 0) return;
    } catch (err) {
      if (isStreamNotFound(err)) return;
      throw err;
    }
    const messages = await consumer.consume();
    try {
      for await (const m of messages) {
        yield {
          subject: m.subject.slice(this.prefix.length),
          seq: m.seq,
          time: m.time.toISOString(),
          payload: m.json(),
        };
        if (m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
    }
  }

  async subscribe<E extends EventDef>(event: E, handler: EventHandler<E>): Promise<EventSubscription> {
    const subject = this.subject(`${event.subject}.*`);
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return this.logger.error({ subject, err: String(err) }, 'event subscription failed');
        deliverEvent(event, handler, msg.string(), msg.subject.slice(subject.length - 1), this.logger);
      },
    });
    // The server knows the subscription once a round trip after it has completed.
    await this.nc.flush();
    return { close: async () => (sub.isClosed() ? undefined : sub.unsubscribe()) };
  }

  async emit<T extends TopicDef>(topic: T, payload: TopicPayloadOf<T>, options?: TopicOptions): Promise<void> {
    const parsed = parseWith(topic.payload, payload);
    const subject = options?.key === undefined ? topic.subject : keyedSubject(topic.subject, options.key);
    try {
      this.nc.publish(this.subject(subject), encoder.encode(JSON.stringify(parsed)));
    } catch (err) {
      throw new AlfredError(ErrorCode.ServiceUnavailable, `could not emit on ${subject}`, undefined, { cause: err });
    }
  }

  async listen<T extends TopicDef>(topic: T, options?: TopicOptions): Promise<TopicSubscription<TopicPayloadOf<T>>> {
    const subject = options?.key === undefined ? topic.subject : keyedSubject(topic.subject, options.key);
    let buffer: TopicBuffer<unknown> | undefined;
    const sub = this.nc.subscribe(this.subject(subject), {
      callback: (err, msg) => {
        if (err) return buffer?.close();
        buffer?.push(msg.string());
      },
    });
    buffer = new TopicBuffer(subject, topic.payload, this.logger, () => {
      this.listeners.delete(buffer!);
      if (!sub.isClosed()) sub.unsubscribe();
    });
    this.listeners.add(buffer);
    // The server knows the subscription once a round trip after it has completed.
    await this.nc.flush();
    return buffer as TopicSubscription<TopicPayloadOf<T>>;
  }

  queue<P extends z.ZodType>(def: QueueDef<P>): WorkQueue<P> {
    let queue = this.queues.get(def.name);
    if (!queue) {
      queue = new NatsWorkQueue<z.ZodType>(def, this);
      this.queues.set(def.name, queue);
    }
    return queue as unknown as WorkQueue<P>;
  }

  /** Stops taking work, lets in-flight handlers finish, then drains the connection; forced after the deadline. */
  /** JetStream acknowledged each publish as stored: its durability is the stream's own. */
  async syncEvents(): Promise<void> {}

  flush(): Promise<void> {
    return this.nc.flush();
  }

  async close(deadlineMs = 10_000): Promise<void> {
    this.link.closing = true;
    if (this.nc.isClosed()) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
    });
    const until = Date.now() + deadlineMs;
    const graceful = (async () => {
      await Promise.allSettled([...this.served].map((s) => s.drain()));
      // Jobs a service did not stop itself are handed back at the deadline, not cut off by the close.
      await Promise.allSettled([...this.queues.values()].map((q) => q.stop(Math.max(0, until - Date.now()))));
      for (const listener of [...this.listeners]) listener.close();
      await this.nc.drain();
    })();
    const outcome = await Promise.race([graceful, deadline]);
    clearTimeout(timer);
    if (outcome === 'late') {
      for (const listener of [...this.listeners]) listener.close();
      this.logger.warn({ deadlineMs }, 'bus did not drain in time; closing');
      await this.nc.close();
    }
  }

  private requestFailure(route: Route, timeoutMs: number, err: unknown): AlfredError {
    const causes = [err, (err as { cause?: unknown })?.cause];
    if (causes.some((e) => e instanceof NoRespondersError) || (err instanceof RequestError && err.isNoResponders())) {
      return unavailable(route);
    }
    if (causes.some((e) => e instanceof TimeoutError)) return timedOut(route, timeoutMs);
    return new AlfredError(
      ErrorCode.ServiceUnavailable,
      `request to ${route.subject} failed: ${String(err)}`,
      undefined,
      {
        cause: err,
      },
    );
  }
}
