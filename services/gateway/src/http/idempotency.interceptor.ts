import { createHash } from 'node:crypto';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { Logger } from '#logging';
import type { FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { IdempotencyStore } from './idempotency.store.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * `Idempotency-Key` on every creating endpoint (POST answering 201): the first request with a key runs and its
 * answer is kept; a retry with the same key and body gets that answer again (nothing is created twice); the same
 * key with another body, or while the first is still running (then with Retry-After), is a 409. A failed request
 * gives its key back; a gateway that died holding one loses it once its lease runs out.
 * Keys are per tenant and path, so two tenants never share one.
 */
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly logger: Logger,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    const raw = req.headers[IDEMPOTENCY_HEADER];
    const creating = req.method === 'POST' && Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler()) === 201;
    if (raw === undefined || !creating) return next.handle();
    return from(this.run(req, Array.isArray(raw) ? raw[0]! : raw, next));
  }

  private async run(req: FastifyRequest, given: string, next: CallHandler): Promise<unknown> {
    if (!KEY_PATTERN.test(given)) {
      throw new AlfredError(ErrorCode.BadRequest, 'Idempotency-Key must be 1-255 printable ASCII characters', {
        header: 'Idempotency-Key',
      });
    }
    const path = req.url.split('?')[0];
    const key = sha256(`${req.alfred.tenant}\n${req.method} ${path}\n${given}`);
    const fingerprint = sha256(
      `${String(req.headers['x-alfred-agent'] ?? '')}\n${req.url}\n${JSON.stringify(req.body ?? null)}`,
    );
    const reservation = await this.store.reserve(key, fingerprint);
    if (reservation.kind === 'replay') return reservation.body;
    if (reservation.kind === 'mismatch') {
      throw new AlfredError(ErrorCode.Conflict, 'this Idempotency-Key was used with another request body', {
        header: 'Idempotency-Key',
      });
    }
    if (reservation.kind === 'in-progress') {
      // Retry-After: its gateway answers soon, or (died) its reservation's lease runs out and the retry takes it over.
      throw new AlfredError(
        ErrorCode.Conflict,
        'a request with this Idempotency-Key is still running; retry after it has answered',
        {
          header: 'Idempotency-Key',
          retryAfterSeconds: reservation.retryAfterSeconds,
        },
      );
    }
    // Services that create derive their new ids from it: a retry after a crash recreates, never duplicates.
    req.alfred.idempotencyKey = key;
    let body: unknown;
    try {
      body = await lastValueFrom(next.handle(), { defaultValue: undefined });
    } catch (err) {
      await this.store
        .release(key)
        .catch((e: unknown) =>
          this.logger.warn({ err: String(e) }, 'could not release an Idempotency-Key yet; retrying in the background'),
        );
      throw err;
    }
    // The answer is kept before it is sent: a client that retries after losing it gets it back.
    await this.store.complete(key, { fingerprint, reservedAt: Date.now(), status: 201, body }).catch((e: unknown) =>
      // The change is made: answer it. A retry sees the key still reserved (409) until the reservation goes stale.
      this.logger.warn(
        { err: String(e), correlationId: req.alfred.correlationId },
        'could not keep the answer of an Idempotency-Key',
      ),
    );
    return body;
  }
}
