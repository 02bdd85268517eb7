import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { Logger } from '#logging';
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

/** Seconds a client should wait before retrying a 503 (or a 409 that says when): the error's own hint, else a short default. */
function retryAfterSeconds(error: AlfredError): number {
  const hinted = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof hinted === 'number' && hinted > 0 ? Math.ceil(hinted) : 1;
}

/** The one place where every failure inside a handler becomes a status and the API's error body. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const req = http.getRequest<FastifyRequest>();
    const error = this.toAlfred(exception, req);
    this.log(error, exception, req);
    const hinted = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds !== undefined;
    if (error.status === 503 || hinted) void reply.header('retry-after', String(retryAfterSeconds(error)));
    void reply.status(error.status).send(error.toBody());
  }

  /**
   * Expected failures are logged without a stack: a client's mistake at info, an outage of a service or the model
   * (502/503/504) at warn. Only an internal error, a defect, is logged at error with its stack.
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
    else if (error.code !== ErrorCode.Internal) this.logger.warn(fields, error.message);
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
