import { ErrorCode, errorStatus, type ErrorBody } from '#contracts';

/** A domain failure with a stable code; transports map it at their edge. */
export class AlfredError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AlfredError';
  }

  get status(): number {
    return errorStatus[this.code] ?? 500;
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }

  /** Rebuilds an error that crossed a transport as an ErrorBody. */
  static fromBody(body: ErrorBody): AlfredError {
    const known = Object.values(ErrorCode) as string[];
    const code = (known.includes(body.error.code) ? body.error.code : ErrorCode.Internal) as ErrorCode;
    return new AlfredError(code, body.error.message, body.error.details);
  }

  static notFound(what: string, id: string): AlfredError {
    return new AlfredError(ErrorCode.NotFound, `${what} ${id} not found`, { id });
  }

  /** A fenced write from a holder (a turn's session lease, a job's delivery) that a newer one took over: refused. */
  static leaseLost(what: string, id: string, token: number, newest: number): AlfredError {
    return new AlfredError(
      ErrorCode.Conflict,
      `${what} ${id} is leased to another holder now (this write's fencing token ${token} is older than ` +
        `${newest}); the write was refused`,
      { id, reason: 'lease_lost', token, current_token: newest },
    );
  }
}

export function isAlfredError(err: unknown): err is AlfredError {
  return err instanceof AlfredError;
}

/** Whether `err` is a CONFLICT (a write that lost to a concurrent one: worth another read and try). */
export function isConflict(err: unknown): boolean {
  return err instanceof AlfredError && err.code === ErrorCode.Conflict;
}

/** Whether `err` is {@link AlfredError.leaseLost}'s refusal. */
export function isLeaseLost(err: unknown): boolean {
  return err instanceof AlfredError && (err.details as { reason?: unknown } | undefined)?.reason === 'lease_lost';
}
