import { JetStreamApiError } from '@nats-io/jetstream';
import { retry } from '#retry';

/**
 * JetStream API error codes a create gets when another instance creates the same stream, bucket or consumer at that
 * moment: the name taken meanwhile (its configuration differs slightly, e.g. an older version of the service), its
 * subjects claimed by the stream being created (nats-server 2.9 answers a concurrent create of one stream so), a
 * stream not found just after its create was answered (a cluster applying the create), or a consumer that exists.
 */
export const CREATE_RACE_CODES: ReadonlySet<number> = new Set([
  10058, // stream name already in use with a different configuration
  10065, // subjects overlap with an existing stream
  10059, // stream not found
  10148, // consumer already exists
  10013, // consumer name already in use
  10105, // consumer already exists (legacy code)
]);

export const isCreateRace = (err: unknown): boolean =>
  err instanceof JetStreamApiError && CREATE_RACE_CODES.has(err.code);

export interface CreateRetry {
  /** Tries in all, the first included (default 6: about 1.5 s of backoff). */
  readonly attempts?: number;
  readonly baseMs?: number;
}

/**
 * Runs `openOrCreate` (which looks first and creates only what it did not find) until it succeeds: a failure that is a
 * race with another instance creating the same thing is tried again after a jittered backoff, when the look finds
 * what the other created and opens it. Any other failure, or a race still lost after `attempts`, is thrown.
 */
export function createRacing<T>(openOrCreate: () => Promise<T>, options: CreateRetry = {}): Promise<T> {
  return retry(openOrCreate, {
    attempts: options.attempts ?? 6,
    retryIf: isCreateRace,
    backoff: { baseMs: options.baseMs ?? 50, maxMs: 800 },
  });
}
