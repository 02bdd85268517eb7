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
  if (status === undefined)
    return /overloaded|api_error/.test(
      String((err.error as { error?: { type?: string } })?.error?.type ?? err.message),
    );
  return RETRIED_STATUSES.has(status) || status >= 500;
}

/** The wait the server asked for (retry-after-ms, else retry-after seconds) when it is sane; else undefined. */
export function serverRetryDelayMs(err: unknown): number | undefined {
  const headers = err instanceof APIError ? err.headers : undefined;
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0 && ms <= MAX_RETRY_AFTER_MS) return ms;
  const seconds = Number.parseFloat(headers?.get('retry-after') ?? '');
  if (Number.isFinite(seconds) && seconds >= 0 && seconds * 1000 <= MAX_RETRY_AFTER_MS) return seconds * 1000;
  return undefined;
}
