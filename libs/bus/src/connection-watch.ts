import type { NatsConnection } from '@nats-io/transport-node';
import { dependencyUnavailable } from '#errors';
import type { LineLogger } from '#logging';
import type { Backoff } from '#retry';

/** Where a bus connection stands: serving, away and trying to come back, or gone for good. */
export type ConnectionState = 'connected' | 'reconnecting' | 'closed';

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
    private readonly logger: LineLogger,
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

  /**
   * Throws SERVICE_UNAVAILABLE (with Retry-After) unless the connection is up: a request must not wait for a reconnect.
   */
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
