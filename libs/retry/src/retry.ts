import { Backoff, type BackoffOptions } from './backoff.js';
import { sleep } from './sleep.js';

export interface RetryOptions {
  /** Tries in all, the first included; `Infinity` tries until one succeeds or the signal aborts. */
  readonly attempts: number;
  /** Whether a failure is worth another try (default: every failure). A permanent one is thrown at once. */
  readonly retryIf?: (err: unknown, attempt: number) => boolean;
  /** The waits between tries; without it a failure is tried again at once (a lost compare-and-set reads anew). */
  readonly backoff?: BackoffOptions;
  /** A wait the failure itself names (a server's Retry-After), used instead of the backoff's when given. */
  readonly waitFor?: (err: unknown) => number | undefined;
  /** Stops retrying: the wait ends at once and the last failure is thrown. */
  readonly signal?: AbortSignal;
  /** Told of each failure that will be tried again, with the wait before the next try. */
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `work` until it succeeds, a failure is not worth retrying, `attempts` are spent or the signal aborts; the
 * failure that ends it is thrown as it is. `work` gets the number of its try (1-based).
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = options.backoff ? new Backoff(options.backoff) : undefined;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await work(attempt);
    } catch (err) {
      if (attempt >= options.attempts || options.signal?.aborted) throw err;
      if (options.retryIf && !options.retryIf(err, attempt)) throw err;
      const delayMs = options.waitFor?.(err) ?? backoff?.next() ?? 0;
      options.onRetry?.(err, attempt, delayMs);
      if (delayMs > 0) await sleep(delayMs, options.signal);
      if (options.signal?.aborted) throw err;
    }
  }
}
