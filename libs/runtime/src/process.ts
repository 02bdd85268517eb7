import { ConfigError } from '#config';
import { isAlfredError } from '#errors';
import type { Logger } from '#logging';
import { markStopping } from './shutdown-deadline.js';

/**
 * Prints a start-up failure that the operator can fix (bad configuration: every bad variable; a
 * domain refusal such as an embedder mismatch: its message) and exits; anything else is rethrown.
 */
export function exitOnConfigError(service: string, err: unknown): never {
  if (err instanceof ConfigError || isAlfredError(err)) {
    process.stderr.write(`${service}: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

/**
 * SIGUSR1 would open Node's inspector on the service (any process that may signal it — once, a skill through the
 * real `process` — could then run code inside it). A listener of our own means Node never starts the inspector;
 * the npm scripts and the image also pass --disable-sigusr1.
 */
export function refuseInspectorSignal(logger: Logger): void {
  process.on('SIGUSR1', () =>
    logger.warn({ signal: 'SIGUSR1' }, 'SIGUSR1 ignored: the inspector is never opened by a signal'),
  );
}

/** On SIGTERM/SIGINT: stop taking work, drain, close, within the deadline; a second signal exits at once. */
export function onShutdown(logger: Logger, deadlineMs: number, stop: () => Promise<void>): void {
  refuseInspectorSignal(logger);
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    markStopping();
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline passed; exiting');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

/**
 * Process-level failures as JSON lines (never Node's plain-text stack dumps): an uncaught exception or unhandled
 * rejection is logged at fatal and ends the process; runtime warnings go to the logger at warn.
 */
export function logProcessFailures(logger: Logger): void {
  const fatal = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, kind);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled promise rejection'));
  process.removeAllListeners('warning');
  process.on('warning', (w) => logger.warn({ warning: w.name, detail: w.message }, 'runtime warning'));
}
