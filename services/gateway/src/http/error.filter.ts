import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { RepeatedLog, type Logger } from '#logging';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toAlfredError } from './fastify-setup.js';

const HTTP_CODES: Record<number, ErrorCode> = {
  400: ErrorCode.BadRequest,
  401: ErrorCode.Unauthorized,
  403: ErrorCode.Forbidden,
  404: ErrorCode.RouteNotFound,
  405: ErrorCode.MethodNotAllowed,
  413: ErrorCode.PayloadTooLarge,
  415: ErrorCode.UnsupportedMediaType,
};

/** Seconds to wait before retrying a 503 (or a 409 that says when): the error's own hint, else a short default. */
function retryAfterSeconds(error: AlfredError): number {
  const hinted = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof hinted === 'number' && hinted > 0 ? Math.ceil(hinted) : 1;
}

/** What an outage answer is about: its code and what is away (a dependency such as NATS, or a service). */
function outageOf(error: AlfredError): string {
  const details = (error.details ?? {}) as { dependency?: unknown; service?: unknown };
  const named = [details.dependency, details.service].find((v): v is string => typeof v === 'string');
  const what = named ?? '';
  return `${error.code} ${what}`.trim();
}

/**
 * A write that timed out (504) may have been carried out all the same: the answer says so, and how to retry safely
 * (the same Idempotency-Key and body answer with what the first attempt made, or run it if it never landed).
 */
function maybeApplied(error: AlfredError, method: string): AlfredError {
  if (error.status !== 504 || method === 'GET' || method === 'HEAD') return error;
  const details = { ...((error.details as Record<string, unknown> | undefined) ?? {}), may_have_applied: true };
  const advice = 'the request may have been applied; retry it with the same Idempotency-Key and body';
  return new AlfredError(error.code, `${error.message} — ${advice}`, details, { cause: error });
}

/** The one place where every failure inside a handler becomes a status and the API's error body. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly outages: RepeatedLog;

  constructor(
    private readonly logger: Logger,
    options: { outageSummaryEveryMs?: number } = {},
  ) {
    this.outages = new RepeatedLog(logger, { summaryEveryMs: options.outageSummaryEveryMs });
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const req = http.getRequest<FastifyRequest>();
    const error = maybeApplied(this.toAlfred(exception, req), req.method);
    this.log(error, exception, req);
    const hinted = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds !== undefined;
    if (error.status === 503 || hinted) void reply.header('retry-after', String(retryAfterSeconds(error)));
    void reply.status(error.status).send(error.toBody());
  }

  /**
   * Expected failures are logged without a stack: a client's mistake at info, an outage of a service or the model
   * (502/503/504) at warn — once when it starts, then a summary a minute and a line when it stops, per error code and
   * dependency (an outage refuses every request; alfred_http_requests_total counts each). Only an internal error, a
   * defect, is logged at error with its stack, every time.
   */
  private log(error: AlfredError, exception: unknown, req: FastifyRequest): void {
    const fields = {
      code: error.code,
      status: error.status,
      method: req.method,
      route: req.routeOptions?.url ?? 'unmatched',
      correlationId: req.alfred?.correlationId,
    };
    if (error.status < 500) this.logger.info(fields, error.message);
    else if (error.code !== ErrorCode.Internal) this.outages.warn(outageOf(error), fields, error.message);
    else this.logger.error({ ...fields, err: exception }, error.message);
  }

  private toAlfred(exception: unknown, req: FastifyRequest): AlfredError {
    if (exception instanceof HttpException) {
      // Nest wraps fastify's own errors (body parsing, limits, media type); their codes say more.
      if (exception.cause !== undefined) return toAlfredError(exception.cause);
      const status = exception.getStatus();
      const code = HTTP_CODES[status] ?? (status >= 500 ? ErrorCode.Internal : ErrorCode.BadRequest);
      const message = status === 404 ? `no route ${req.method} ${req.url.split('?')[0]}` : exception.message;
      return new AlfredError(code, message);
    }
    return toAlfredError(exception);
  }
}
