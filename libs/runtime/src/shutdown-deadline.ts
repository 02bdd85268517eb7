/** When this process was told to stop (SIGTERM/SIGINT), or undefined while it has not been. */
let stoppingSince: number | undefined;

/** Marks the moment the process was told to stop: every drain measures the shutdown deadline from it. */
export function markStopping(now = Date.now()): void {
  stoppingSince ??= now;
}

/**
 * What stopping needs after the drain: stopping the work still running (its finished part written, its lease and
 * credential released), closing stores and the bus. 1 s, or a tenth of a short deadline.
 */
export function closeReserveMs(deadlineMs: number): number {
  return Math.min(1_000, Math.floor(deadlineMs / 10));
}

/**
 * How long work in flight (an agent turn, a distill job) may still run to finish within the shutdown deadline: until
 * the deadline, measured from the stop signal (from now when none came, as when a host stops its services), less
 * what closing needs. Drains that run one after another in one process share the one deadline.
 */
export function drainWindowMs(deadlineMs: number, now = Date.now()): number {
  return Math.max(0, (stoppingSince ?? now) + deadlineMs - closeReserveMs(deadlineMs) - now);
}
