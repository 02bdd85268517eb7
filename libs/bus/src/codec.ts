import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import {
  ErrorBody,
  ErrorCode,
  type EventDef,
  type ParsedRequestOf,
  type RequestOf,
  type ResponseOf,
  type Route,
} from '#contracts';
import { AlfredError, classifyOutage, isAlfredError, zodToAlfredError } from '#errors';
import type { z } from 'zod';
import { RepeatedLog, type LineLogger } from '#logging';
import type { EventHandler, Handler, MessageContext, RequestOptions } from './bus.js';
import { requireTenant } from './tenancy-guard.js';
import { observeRequest } from './bus-metrics.js';

/** Message headers both adapters agree on. */
export const BusHeader = {
  CorrelationId: 'alfred-correlation-id',
  Error: 'alfred-error',
  /** Epoch ms after which the caller no longer waits; the serving side abandons work past it. */
  Deadline: 'alfred-deadline',
  IdempotencyKey: 'alfred-idempotency-key',
} as const;

/**
 * Largest payload (JSON bytes) a request or a reply may have unless its route says otherwise: NATS's default
 * max_payload (1 MiB) less room for headers. Both adapters enforce it, so what fails distributed fails embedded.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_000_000;

/** A request as both adapters send it: JSON within the route's limit, its time budget and its deadline. */
export interface Envelope {
  readonly data: string;
  readonly correlationId: string;
  readonly idempotencyKey?: string;
  /** How long the caller waits. */
  readonly timeoutMs: number;
  /** What the serving side works to: a little before the caller gives up, so nothing commits after a 504. */
  readonly deadline: number;
}

/**
 * Builds the envelope of a request: refuses a payload over the route's limit (PAYLOAD_TOO_LARGE, before anything
 * is sent) and gives the request what remains of the caller's deadline, or times out at once if nothing remains.
 */
export function envelope<R extends Route>(
  route: R,
  payload: RequestOf<R>,
  options: RequestOptions | undefined,
  defaultTimeoutMs: number,
): Envelope {
  requireTenant(route, payload);
  const data = JSON.stringify(payload) ?? 'null';
  const limit = route.options.maxRequestBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const size = Buffer.byteLength(data);
  if (size > limit) {
    throw new AlfredError(
      ErrorCode.PayloadTooLarge,
      `request to ${route.subject} is ${size} bytes; the limit is ${limit}`,
      { size, limit },
    );
  }
  const now = Date.now();
  let timeoutMs = options?.timeoutMs ?? route.options.timeoutMs ?? defaultTimeoutMs;
  const callerDeadline = options?.context?.deadline;
  if (callerDeadline !== undefined) timeoutMs = Math.min(timeoutMs, callerDeadline - now);
  if (timeoutMs <= 0) {
    throw new AlfredError(
      ErrorCode.ServiceTimeout,
      `no time was left for ${route.subject}: the caller's deadline has passed`,
    );
  }
  const margin = Math.min(500, Math.floor(timeoutMs / 10));
  const idempotencyKey = options?.context?.idempotencyKey;
  return {
    data,
    correlationId: options?.context?.correlationId ?? randomUUID(),
    ...(idempotencyKey ? { idempotencyKey } : {}),
    timeoutMs,
    deadline: now + timeoutMs - margin,
  };
}

/** The request being handled on this async path (set by both adapters around every handler). */
const handling = new AsyncLocalStorage<MessageContext>();

/** The context of the request whose handler is running here, if any. */
export function currentRequest(): MessageContext | undefined {
  return handling.getStore();
}

/**
 * Throws SERVICE_TIMEOUT when the deadline of the request being handled (or of `ctx`) has passed: logic calls it
 * right before committing, so work that outlived its caller is abandoned instead of applied after a 504.
 */
export function assertBeforeDeadline(what: string, ctx: MessageContext | undefined = currentRequest()): void {
  if (ctx?.deadline !== undefined && Date.now() >= ctx.deadline) {
    throw new AlfredError(ErrorCode.ServiceTimeout, `the caller's deadline passed before ${what}; nothing was changed`);
  }
}

/** Reads the deadline header (absent or malformed: no deadline). */
export function parseDeadline(header: string | undefined): number | undefined {
  const value = header ? Number(header) : NaN;
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** A reply as it crosses the wire: JSON text, and whether it is an ErrorBody. */
export interface WireReply {
  readonly data: string;
  readonly isError: boolean;
}

function decodeJson(text: string, onError: () => AlfredError): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw onError();
  }
}

/** Parses with a schema; a failure becomes the AlfredError the caller would see over HTTP. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToAlfredError(result.error);
  return result.data;
}

/** Per logger, the outages its handlers met: one line when one starts, a summary a minute, one when it stops. */
const outageLogs = new WeakMap<LineLogger, RepeatedLog>();

/** Turns anything a handler threw into the ErrorBody sent back; unexpected errors are logged here, once. */
export function errorBodyOf(err: unknown, subject: string, ctx: MessageContext, logger: LineLogger): ErrorBody {
  if (isAlfredError(err)) return err.toBody();
  const outage = classifyOutage(err, subject);
  if (outage) {
    let outages = outageLogs.get(logger);
    if (!outages) outageLogs.set(logger, (outages = new RepeatedLog(logger)));
    const dependency = (outage.details as { dependency?: unknown } | undefined)?.dependency;
    const fields = { correlationId: ctx.correlationId, subject, err: String(err) };
    outages.warn(`dependency unavailable ${String(dependency ?? '')}`.trim(), fields, 'dependency unavailable');
    return outage.toBody();
  }
  logger.error(
    { correlationId: ctx.correlationId, subject, err: err instanceof Error ? err.stack : String(err) },
    'handler failed',
  );
  return new AlfredError(ErrorCode.Internal, `internal error while handling ${subject}`).toBody();
}

/** The serving side of a request: parse (defaults applied), handle, check the reply, encode. */
export async function handleRequest<R extends Route>(
  route: R,
  handler: Handler<R>,
  data: string,
  ctx: MessageContext,
  logger: LineLogger,
): Promise<WireReply> {
  const start = process.hrtime.bigint();
  try {
    // Work that arrives after its caller gave up is not started (it could only commit after the client saw 504).
    assertBeforeDeadline(`${route.subject} was handled`, ctx);
    const json = decodeJson(
      data,
      () => new AlfredError(ErrorCode.InvalidJson, `request to ${route.subject} is not valid JSON`),
    );
    const parsed = parseWith(route.request, json) as ParsedRequestOf<R>;
    requireTenant(route, parsed);
    const result = await handling.run(ctx, () => handler(parsed, ctx));
    const reply = route.response.safeParse(result);
    if (!reply.success) {
      throw new Error(`reply of ${route.subject} does not match its schema: ${reply.error.message}`);
    }
    const text = JSON.stringify(reply.data);
    const limit = route.options.maxReplyBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    const size = Buffer.byteLength(text);
    if (size > limit) {
      throw new AlfredError(
        ErrorCode.ReplyTooLarge,
        `the reply of ${route.subject} is ${size} bytes; the limit is ${limit} (ask for less: a smaller page or batch)`,
        {
          size,
          limit,
        },
      );
    }
    observeRequest(route.subject, 'server', start);
    return { data: text, isError: false };
  } catch (err) {
    observeRequest(route.subject, 'server', start, err);
    return { data: JSON.stringify(errorBodyOf(err, route.subject, ctx, logger)), isError: true };
  }
}

/** The requesting side: an ErrorBody is rethrown as AlfredError, a reply is checked against the route. */
export function decodeReply<R extends Route>(route: R, reply: WireReply): ResponseOf<R> {
  const internal = (what: string, details?: unknown) =>
    new AlfredError(ErrorCode.Internal, `reply from ${route.subject} ${what}`, details);
  const json = decodeJson(reply.data, () => internal('is not valid JSON'));
  if (reply.isError) {
    const body = ErrorBody.safeParse(json);
    if (!body.success) throw internal('is an error without a valid error body');
    throw AlfredError.fromBody(body.data);
  }
  const parsed = route.response.safeParse(json);
  if (!parsed.success) throw internal('does not match its response schema', zodToAlfredError(parsed.error).details);
  return parsed.data as ResponseOf<R>;
}

export const unavailable = (route: Route) =>
  new AlfredError(ErrorCode.ServiceUnavailable, `no ${route.service} instance is answering ${route.subject}`, {
    service: route.service,
  });

export const timedOut = (route: Route, timeoutMs: number) =>
  new AlfredError(ErrorCode.ServiceTimeout, `${route.service} did not answer ${route.subject} within ${timeoutMs} ms`, {
    service: route.service,
  });

/**
 * Hands a received event to a subscriber: a payload that breaks the schema, or a throwing handler, is logged and
 * skipped.
 */
export function deliverEvent<E extends EventDef>(
  event: E,
  handler: EventHandler<E>,
  data: string,
  key: string,
  logger: LineLogger,
): void {
  const subject = `${event.subject}.${key}`;
  let payload: unknown;
  try {
    payload = parseWith(event.payload, JSON.parse(data));
  } catch (err) {
    logger.warn({ subject, err: String(err) }, 'event does not match its schema; skipped');
    return;
  }
  try {
    handler(payload as Parameters<EventHandler<E>>[0], key);
  } catch (err) {
    logger.error({ subject, err: err instanceof Error ? err.stack : String(err) }, 'event subscriber failed');
  }
}
