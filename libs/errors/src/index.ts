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
}

export function isAlfredError(err: unknown): err is AlfredError {
  return err instanceof AlfredError;
}
