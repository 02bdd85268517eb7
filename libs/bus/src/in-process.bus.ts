import { join } from 'node:path';
import type { EventDef, PayloadOf, RequestOf, ResponseOf, Route, TopicDef, TopicPayloadOf } from '#contracts';
import type { z } from 'zod';
import type {
  Bus,
  EventHandler,
  EventSubscription,
  Handler,
  MessageContext,
  PublishOptions,
  RequestOptions,
  ServeOptions,
  Served,
  StoredEvent,
  TopicOptions,
  TopicSubscription,
} from './bus.js';
import {
  decodeReply,
  deliverEvent,
  envelope,
  handleRequest,
  parseWith,
  timedOut,
  unavailable,
  type WireReply,
} from './codec.js';
import { consoleLogger, type LineLogger } from '#logging';
import { observedRequest } from './bus-metrics.js';
import { InProcessEventStore } from './in-process-event-store.js';
import { InProcessWorkQueue } from './in-process-work-queue.js';
import type { QueueDef, WorkQueue } from './queue.js';
import { keyedSubject } from './subject.js';
import { TopicBuffer } from './topic-subscription.js';

export interface InProcessBusOptions {
  /** Events live in `<dataDir>/events`, work queues in `<dataDir>/queues`. */
  readonly dataDir: string;
  readonly defaultTimeoutMs?: number;
  readonly logger?: LineLogger;
  /** How long the event logs keep events (compacted to it, as JetStream's max_age); 0 or absent: for ever. */
  readonly eventsMaxAgeMs?: number;
}

type Responder = (data: string, ctx: MessageContext) => Promise<WireReply>;

interface Group {
  readonly members: Responder[];
  next: number;
}

/**
 * The embedded bus: the same schemas, JSON round trip and error semantics as NATS, dispatched in-process.
 * Every queue group of a subject gets the request (one member each, round-robin); the first reply wins.
 */
export class InProcessBus implements Bus {
  readonly kind = 'in-process' as const;
  private readonly subjects = new Map<string, Map<string, Group>>();
  private readonly served = new Set<Served>();
  private readonly eventSubscribers = new Map<string, Set<(data: string, key: string) => void>>();
  private readonly events: InProcessEventStore;
  private readonly queues = new Map<string, InProcessWorkQueue<z.ZodType>>();
  private readonly listeners = new Map<string, Set<TopicBuffer<unknown>>>();
  private readonly logger: LineLogger;
  private readonly defaultTimeoutMs: number;

  constructor(private readonly options: InProcessBusOptions) {
    this.logger = options.logger ?? consoleLogger;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 5_000;
    this.events = new InProcessEventStore(join(options.dataDir, 'events'), options.eventsMaxAgeMs ?? 0);
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
    const ctx: MessageContext = {
      correlationId: env.correlationId,
      deadline: env.deadline,
      ...(env.idempotencyKey ? { idempotencyKey: env.idempotencyKey } : {}),
    };
    const responders = this.pick(route.subject);
    if (responders.length === 0) throw unavailable(route);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut(route, env.timeoutMs)), env.timeoutMs);
    });
    try {
      const reply = await Promise.race([...responders.map((respond) => respond(env.data, ctx)), timeout]);
      return decodeReply(route, reply);
    } finally {
      clearTimeout(timer);
    }
  }

  serve<R extends Route>(route: R, handler: Handler<R>, options?: ServeOptions): Served {
    const inFlight = new Set<Promise<WireReply>>();
    const responder: Responder = (data, ctx) => {
      const run = handleRequest(route, handler, data, ctx, this.logger);
      inFlight.add(run);
      void run.finally(() => inFlight.delete(run));
      return run;
    };
    const group = this.group(route.subject, options?.queue ?? route.service);
    group.members.push(responder);
    const served: Served = {
      drain: async () => {
        const at = group.members.indexOf(responder);
        if (at >= 0) group.members.splice(at, 1);
        this.served.delete(served);
        await Promise.allSettled([...inFlight]);
      },
    };
    this.served.add(served);
    return served;
  }

  async publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void> {
    const text = JSON.stringify(parseWith(event.payload, payload));
    const json = JSON.parse(text) as unknown;
    const subject = keyedSubject(event.subject, options.key);
    await this.events.append(event.stream, subject, json, options.msgId, options.sync ?? true);
    for (const deliver of this.eventSubscribers.get(event.subject) ?? []) deliver(text, options.key);
  }

  async subscribe<E extends EventDef>(event: E, handler: EventHandler<E>): Promise<EventSubscription> {
    let set = this.eventSubscribers.get(event.subject);
    if (!set) this.eventSubscribers.set(event.subject, (set = new Set()));
    const deliver = (data: string, key: string) => deliverEvent(event, handler, data, key, this.logger);
    set.add(deliver);
    return { close: async () => void set.delete(deliver) };
  }

  readEvents(stream: string, filter: string): AsyncIterable<StoredEvent> {
    return this.events.read(stream, filter);
  }

  async emit<T extends TopicDef>(topic: T, payload: TopicPayloadOf<T>, options?: TopicOptions): Promise<void> {
    const text = JSON.stringify(parseWith(topic.payload, payload));
    const subject = options?.key === undefined ? topic.subject : keyedSubject(topic.subject, options.key);
    for (const listener of this.listeners.get(subject) ?? []) listener.push(text);
  }

  async listen<T extends TopicDef>(topic: T, options?: TopicOptions): Promise<TopicSubscription<TopicPayloadOf<T>>> {
    const subject = options?.key === undefined ? topic.subject : keyedSubject(topic.subject, options.key);
    let set = this.listeners.get(subject);
    if (!set) this.listeners.set(subject, (set = new Set()));
    const buffer: TopicBuffer<unknown> = new TopicBuffer(subject, topic.payload, this.logger, () => {
      set.delete(buffer);
      if (set.size === 0 && this.listeners.get(subject) === set) this.listeners.delete(subject);
    });
    set.add(buffer);
    return buffer as TopicSubscription<TopicPayloadOf<T>>;
  }

  queue<P extends z.ZodType>(def: QueueDef<P>): WorkQueue<P> {
    let queue = this.queues.get(def.name);
    if (!queue) {
      queue = new InProcessWorkQueue<z.ZodType>(def, join(this.options.dataDir, 'queues'), this.logger);
      this.queues.set(def.name, queue);
    }
    return queue as unknown as WorkQueue<P>;
  }

  /** Stops taking work and waits for running handlers and jobs, up to the deadline; then closes the files. */
  syncEvents(): Promise<void> {
    return this.events.sync();
  }

  /** Handlers are live as soon as they are registered in-process. */
  async flush(): Promise<void> {}

  connectionState(): 'connected' {
    return 'connected';
  }

  async close(deadlineMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
    });
    const drained = Promise.allSettled([
      ...[...this.served].map((s) => s.drain()),
      // Jobs a service did not stop itself are handed back at the deadline, not cut off by the close.
      ...[...this.queues.values()].map((q) => q.stop(deadlineMs)),
    ]);
    if ((await Promise.race([drained, deadline])) === 'late') {
      this.logger.warn({ deadlineMs }, 'bus did not drain in time; closing');
    }
    clearTimeout(timer);
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) listener.close();
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    await this.events.close();
  }

  private group(subject: string, queue: string): Group {
    let groups = this.subjects.get(subject);
    if (!groups) this.subjects.set(subject, (groups = new Map()));
    let group = groups.get(queue);
    if (!group) groups.set(queue, (group = { members: [], next: 0 }));
    return group;
  }

  private pick(subject: string): Responder[] {
    const picked: Responder[] = [];
    for (const group of this.subjects.get(subject)?.values() ?? []) {
      if (group.members.length === 0) continue;
      picked.push(group.members[group.next++ % group.members.length]!);
    }
    return picked;
  }
}
