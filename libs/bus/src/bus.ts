import type {
  EventDef,
  PayloadOf,
  ParsedRequestOf,
  RequestOf,
  ResponseOf,
  Route,
  TopicDef,
  TopicPayloadOf,
} from '#contracts';
import type { z } from 'zod';
import type { QueueDef, WorkQueue } from './queue.js';
import type { ConnectionState } from './connection-watch.js';

/** What travels with every message besides its payload. */
export interface MessageContext {
  /** Carried in message headers across every hop; logged with every line. */
  readonly correlationId: string;
  /**
   * Epoch ms after which the original caller no longer waits (it has answered 504): work still running then is
   * abandoned, not committed. Carried in headers; a request made with this context gets only what remains.
   */
  readonly deadline?: number;
  /**
   * The client's Idempotency-Key (hashed with its tenant and path by the gateway), when it sent one: a service that
   * creates may derive its new ids from it, so a retry after a crash recreates the same entity instead of another.
   */
  readonly idempotencyKey?: string;
}

export interface RequestOptions {
  /**
   * How long to wait for a reply before SERVICE_TIMEOUT (504); defaults to the route's timeoutMs, then the bus's.
   * Never more than what remains of `context.deadline`.
   */
  readonly timeoutMs?: number;
  readonly context?: MessageContext;
}

export type Handler<R extends Route> = (payload: ParsedRequestOf<R>, ctx: MessageContext) => Promise<ResponseOf<R>>;

export interface ServeOptions {
  /** Queue group; defaults to the route's service name so instances share the work. */
  readonly queue?: string;
}

export interface Served {
  /** Stop taking new requests and finish those in flight. */
  drain(): Promise<void>;
}

/** A durable event as read back from its stream. */
export interface StoredEvent<P = unknown> {
  readonly subject: string;
  readonly seq: number;
  readonly time: string;
  readonly payload: P;
}

/** A live subscription to a topic: payloads as they arrive, until closed (by the reader or the bus). */
export interface TopicSubscription<P> extends AsyncIterable<P> {
  /** The next payload, or undefined when closed or when `timeoutMs` passes without one. */
  next(timeoutMs?: number): Promise<P | undefined>;
  close(): void;
}

/** A live fan-out subscription to an event's subjects; `close` stops delivery. */
export interface EventSubscription {
  close(): Promise<void>;
}

/** Called with each event's payload (validated with the event's schema) and its key. */
export type EventHandler<E extends EventDef> = (payload: PayloadOf<E>, key: string) => void;

export interface TopicOptions {
  /** Appended to the topic's subject as one more token (e.g. a turn id). */
  readonly key?: string;
}

export interface PublishOptions {
  readonly key: string;
  readonly msgId: string;
  /**
   * false: resolve once the event is stored and readable, durable only after the next `syncEvents()` — for a publisher
   * that holds the event durably itself until then (the outbox). Default true.
   */
  readonly sync?: boolean;
}

/**
 * The bus port. Adapters validate payloads with the route's schemas, once on each side:
 * the serving side parses requests (applying defaults) and its replies, the requesting side
 * parses replies. Handler errors cross as ErrorBody and are rethrown as AlfredError.
 * No responder is SERVICE_UNAVAILABLE; no reply in time is SERVICE_TIMEOUT.
 */
export interface Bus {
  readonly kind: 'nats' | 'in-process';
  request<R extends Route>(route: R, payload: RequestOf<R>, options?: RequestOptions): Promise<ResponseOf<R>>;
  serve<R extends Route>(route: R, handler: Handler<R>, options?: ServeOptions): Served;
  /**
   * Appends an event durably (JetStream in NATS mode, an fsynced log in-process) before resolving.
   * `key` is appended to the subject as one more token (e.g. a memory id); `msgId` deduplicates.
   */
  publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void>;
  /**
   * Makes durable every event published so far with `sync: false` (in-process: one fsync per stream log; NATS:
   * nothing to do, JetStream's acknowledgement is its own durability).
   */
  syncEvents(): Promise<void>;
  /**
   * Fan-out delivery (no queue group) of an event as it is published, with any key, to every subscriber on
   * every connection: for caches and live views. Not durable: what is published while a subscriber is away
   * is not replayed (readEvents has it). Resolves once the subscription is in place.
   */
  subscribe<E extends EventDef>(event: E, handler: EventHandler<E>): Promise<EventSubscription>;
  /** Reads back, in order, the stored events of a stream whose subject matches `filter` (NATS wildcards). */
  readEvents(stream: string, filter: string): AsyncIterable<StoredEvent>;
  /**
   * Non-durable fan-out (core NATS publish; in-process dispatch): every current listener of the topic and key
   * gets the payload, validated with the topic's schema; nothing is stored, a message with no listener is gone.
   */
  emit<T extends TopicDef>(topic: T, payload: TopicPayloadOf<T>, options?: TopicOptions): Promise<void>;
  /**
   * Listens to a topic and key; resolves once the subscription is in place, so nothing emitted afterwards is missed.
   */
  listen<T extends TopicDef>(topic: T, options?: TopicOptions): Promise<TopicSubscription<TopicPayloadOf<T>>>;
  /** A durable job queue (JetStream work queue in NATS mode, an fsynced log in-process). */
  queue<P extends z.ZodType>(def: QueueDef<P>): WorkQueue<P>;
  /** Drains subscriptions and closes connections, within the deadline. */
  close(deadlineMs?: number): Promise<void>;
  /** The broker connection's state (in-process: always connected); readiness reports it while it is away. */
  connectionState(): ConnectionState;
  /** Resolves once everything served or subscribed so far is live for other connections (NATS: a server round trip). */
  flush(): Promise<void>;
}

export const BUS = Symbol('BUS');
