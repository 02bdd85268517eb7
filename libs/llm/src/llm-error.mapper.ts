import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

export interface ErrorContext {
  /** Attempts the client made: 1 + maxRetries when the SDK exhausted its retries on a retryable status. */
  readonly attempts: number;
  readonly baseUrl: string;
}

/** Thrown before any request when no API key is configured. */
export function modelNotConfigured(): AlfredError {
  return new AlfredError(
    ErrorCode.ModelNotConfigured,
    'No language model is configured: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) to use Claude',
  );
}

function apiErrorType(err: APIError): string | undefined {
  const body = err.error as { error?: { type?: unknown } } | undefined;
  return typeof body?.error?.type === 'string' ? body.error.type : (err.type ?? undefined);
}

function retryAfterSeconds(err: APIError): number | undefined {
  const raw = err.headers?.get('retry-after-ms') ?? undefined;
  if (raw !== undefined && !Number.isNaN(parseFloat(raw))) return parseFloat(raw) / 1000;
  const header = err.headers?.get('retry-after') ?? undefined;
  if (header === undefined) return undefined;
  const seconds = parseFloat(header);
  if (!Number.isNaN(seconds)) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** "prompt is too long: N tokens > M maximum" (400) or a 413 request_too_large: the request does not fit. */
function isContextTooLong(err: APIError): boolean {
  if (err.status === 413) return true;
  return err.status === 400 && /prompt is too long|context window|too many tokens/i.test(err.message);
}

function fromStatus(err: APIError, ctx: ErrorContext): AlfredError {
  const status = err.status;
  const type = apiErrorType(err);
  const details = { status, type, request_id: err.requestID ?? undefined, attempts: ctx.attempts };
  if (status === 401 || status === 403) {
    return new AlfredError(
      ErrorCode.ModelAuthFailed,
      `The model API rejected the key (${status} ${type ?? 'error'}): check ANTHROPIC_API_KEY`,
      details,
      { cause: err },
    );
  }
  if (status === 429) {
    const retryAfter = retryAfterSeconds(err);
    return new AlfredError(
      ErrorCode.RateLimited,
      `The model API is rate limiting requests (still 429 after ${ctx.attempts} attempts)`,
      { ...details, retry_after_seconds: retryAfter },
      { cause: err },
    );
  }
  if (isContextTooLong(err)) {
    return new AlfredError(
      ErrorCode.ContextTooLong,
      `The model refused the request as longer than its context window: ${err.message}`,
      details,
      { cause: err },
    );
  }
  if (status === 408 || status === 504) {
    return new AlfredError(ErrorCode.ServiceTimeout, `The model API timed out (${status})`, details, { cause: err });
  }
  const what =
    status === 529 || type === 'overloaded_error'
      ? 'is overloaded'
      : status === undefined
        ? 'failed mid-stream'
        : `answered ${status}`;
  const after = status !== undefined && status >= 500 ? ` after ${ctx.attempts} attempts` : '';
  return new AlfredError(ErrorCode.ModelError, `The model API ${what}${after}: ${err.message}`, details, {
    cause: err,
  });
}

/** Maps whatever the SDK threw to an AlfredError with a stable code and a message a user can act on. */
export function mapLlmError(err: unknown, ctx: ErrorContext): AlfredError {
  if (err instanceof AlfredError) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return new AlfredError(
      ErrorCode.ServiceTimeout,
      `The model API did not answer in time (${ctx.attempts} attempts)`,
      { attempts: ctx.attempts },
      { cause: err },
    );
  }
  if (err instanceof APIUserAbortError) {
    return new AlfredError(ErrorCode.ServiceTimeout, 'The model request was aborted', undefined, { cause: err });
  }
  if (err instanceof APIConnectionError) {
    return new AlfredError(
      ErrorCode.ModelError,
      `Could not reach the model API at ${ctx.baseUrl}: ${err.message}`,
      { attempts: ctx.attempts },
      { cause: err },
    );
  }
  if (err instanceof APIError) return fromStatus(err, ctx);
  const message = err instanceof Error ? err.message : String(err);
  return new AlfredError(ErrorCode.ModelError, `The model call failed: ${message}`, undefined, { cause: err });
}
