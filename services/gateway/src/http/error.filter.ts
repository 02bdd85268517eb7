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

/** The one place where every failure inside a handler becomes a status and the API's error body. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const req = http.getRequest<FastifyRequest>();
    const error = this.toAlfred(exception, req);
    if (error.status >= 500) {
      this.logger.error({ err: exception, code: error.code, correlationId: req.alfred?.correlationId }, error.message);
    }
    void reply.status(error.status).send(error.toBody());
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
