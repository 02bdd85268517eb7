import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';

const RETRIED_STATUSES = new Set([408, 409, 429]);
const MAX_RETRY_AFTER_MS = 60_000;

/** Whether a failed attempt is worth another (the SDK's own rule: connection errors, 408/409/429 and 5xx). */
export function isRetryable(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError) return true;
  if (!(err instanceof APIError)) return false;
  if (err.headers?.get('x-should-retry') === 'false') return false;
  const status = err.status;
  // A streamed `error` event (overloaded mid-stream) has no status; it is retried like a 529.
  if (status === undefined) return /overloaded|api_error/.test(String((err.error as { error?: { type?: string } })?.error?.type ?? err.message));
  return RETRIED_STATUSES.has(status) || status >= 500;
}

/** How long to wait before attempt `attempt + 1`: the server's retry-after when sane, else capped exponential backoff. */
export function retryDelayMs(err: unknown, attempt: number): number {
  const headers = err instanceof APIError ? err.headers : undefined;
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0 && ms <= MAX_RETRY_AFTER_MS) return ms;
  const seconds = Number.parseFloat(headers?.get('retry-after') ?? '');
  if (Number.isFinite(seconds) && seconds >= 0 && seconds * 1000 <= MAX_RETRY_AFTER_MS) return seconds * 1000;
  const base = Math.min(500 * 2 ** (attempt - 1), 8_000);
  return Math.round(base * (1 - Math.random() * 0.25));
}

/** Waits, unless the signal aborts first (then resolves at once: the caller sees the signal). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
