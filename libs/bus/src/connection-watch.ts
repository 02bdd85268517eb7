import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { BusLogger } from './codec.js';

/** Where a bus connection stands: serving, away and trying to come back, or gone for good. */
export type ConnectionState = 'connected' | 'reconnecting' | 'closed';

export interface ReconnectBackoff {
  /** First delay before a reconnect attempt (default 250 ms). */
  readonly baseMs?: number;
  /** Longest delay between attempts (default 2 s): a restarted server is found within this. */
  readonly maxMs?: number;
}

/** Seconds a client is told to wait (Retry-After) while a dependency is away. */
export const RETRY_AFTER_SECONDS = 2;

/** The error every request gets at once while a dependency is away: 503 with a retry hint, never a hang. */
export function dependencyUnavailable(dependency: string, what: string): AlfredError {
  return new AlfredError(ErrorCode.ServiceUnavailable, `${dependency} is unavailable (reconnecting); could not ${what}`, {
    dependency,
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  });
}

/** Capped exponential backoff with full jitter (delay drawn from [max/2, max] of the current step); reset on success. */
export class Backoff {
  private attempt = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(options: ReconnectBackoff = {}) {
    this.baseMs = options.baseMs ?? 250;
    this.maxMs = options.maxMs ?? 2_000;
  }

  next(): number {
    const step = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt++, 16));
    return Math.round(step / 2 + (Math.random() * step) / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/**
 * Follows a NATS connection's lifecycle: logs every disconnect and reconnect, keeps the state that readiness and
 * the fail-fast check read, and reports a close that nobody asked for (the process should exit non-zero then).
 */
export class ConnectionWatch {
  state: ConnectionState = 'connected';
  /** Set by the owner before it closes the connection on purpose. */
  closing = false;
  private since = Date.now();

  constructor(
    nc: NatsConnection,
    private readonly logger: BusLogger,
    private readonly backoff: Backoff,
    onClosed?: (err: Error | undefined) => void,
  ) {
    void this.follow(nc);
    void nc.closed().then((err) => {
      this.state = 'closed';
      if (this.closing) return;
      this.logger.error({ err: err ? String(err) : undefined }, 'NATS connection closed for good');
      onClosed?.(err ?? undefined);
    });
  }

  /** Throws SERVICE_UNAVAILABLE (with Retry-After) unless the connection is up: a request must not wait for a reconnect. */
  assertConnected(what: string): void {
    if (this.state !== 'connected') throw dependencyUnavailable('NATS', what);
  }

  private async follow(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.state = 'reconnecting';
        this.since = Date.now();
        this.logger.warn({ server: s.server }, 'NATS disconnected; reconnecting');
      } else if (s.type === 'reconnect') {
        this.state = 'connected';
        this.backoff.reset();
        this.logger.warn({ server: s.server, downMs: Date.now() - this.since }, 'NATS reconnected');
      } else if (s.type === 'error') {
        this.logger.warn({ err: String(s.error) }, 'NATS connection error');
      } else if (s.type === 'close') {
        this.state = 'closed';
      }
    }
  }
}
