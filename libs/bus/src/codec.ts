import { ErrorBody, ErrorCode, type EventDef, type ParsedRequestOf, type ResponseOf, type Route } from '#contracts';
import { AlfredError, isAlfredError } from '#errors';
import type { z } from 'zod';
import type { EventHandler, Handler, MessageContext } from './bus.js';
import { zodToAlfredError } from './zod-error.js';
import { observeRequest } from './bus-metrics.js';

/** Message headers both adapters agree on. */
export const BusHeader = {
  CorrelationId: 'alfred-correlation-id',
  Error: 'alfred-error',
} as const;

/** The part of a pino logger the bus uses; pino loggers fit it as they are. */
export interface BusLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const consoleLogger: BusLogger = {
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj })),
  warn: (obj, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...obj })),
};

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

/** Turns anything a handler threw into the ErrorBody sent back; unexpected errors are logged here, once. */
export function errorBodyOf(err: unknown, subject: string, ctx: MessageContext, logger: BusLogger): ErrorBody {
  if (isAlfredError(err)) return err.toBody();
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
  logger: BusLogger,
): Promise<WireReply> {
  const start = process.hrtime.bigint();
  try {
    const json = decodeJson(data, () => new AlfredError(ErrorCode.InvalidJson, `request to ${route.subject} is not valid JSON`));
    const result = await handler(parseWith(route.request, json) as ParsedRequestOf<R>, ctx);
    const reply = route.response.safeParse(result);
    if (!reply.success) {
      throw new Error(`reply of ${route.subject} does not match its schema: ${reply.error.message}`);
    }
    observeRequest(route.subject, 'server', start);
    return { data: JSON.stringify(reply.data), isError: false };
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
  new AlfredError(ErrorCode.ServiceUnavailable, `no ${route.service} instance is answering ${route.subject}`);

export const timedOut = (route: Route, timeoutMs: number) =>
  new AlfredError(ErrorCode.ServiceTimeout, `${route.service} did not answer ${route.subject} within ${timeoutMs} ms`);

/** Hands a received event to a subscriber: a payload that breaks the schema, or a throwing handler, is logged and skipped. */
export function deliverEvent<E extends EventDef>(event: E, handler: EventHandler<E>, data: string, key: string, logger: BusLogger): void {
  const subject = `${event.subject}.${key}`;
  let payload: unknown;
  try {
    payload = parseWith(event.payload, JSON.parse(data));
  } catch (err) {
    return logger.warn({ subject, err: String(err) }, 'event does not match its schema; skipped');
  }
  try {
    handler(payload as Parameters<EventHandler<E>>[0], key);
  } catch (err) {
    logger.error({ subject, err: err instanceof Error ? err.stack : String(err) }, 'event subscriber failed');
  }
}
