import { ErrorCode } from '#contracts';
import { isAlfredError } from '#errors';
import { Metrics, secondsSince } from '#metrics';
import type { JobOutcome } from './queue.js';

/** Which end of a request a measurement is from: the caller waiting for the reply, or the handler serving it. */
export type BusSide = 'client' | 'server';

/**
 * The bus's one metrics hook: both adapters report each request here, once per side, with its start time and the
 * error it ended in (an AlfredError's code; anything else counts as INTERNAL_ERROR). Subjects are unprefixed.
 */
export function observeRequest(subject: string, side: BusSide, startNs: bigint, err?: unknown): void {
  const code = err === undefined ? undefined : isAlfredError(err) ? err.code : ErrorCode.Internal;
  const outcome =
    code === undefined
      ? 'ok'
      : code === ErrorCode.ServiceTimeout
        ? 'timeout'
        : code === ErrorCode.ServiceUnavailable
          ? 'unavailable'
          : 'error';
  Metrics.busRequests.inc({ subject, side, outcome });
  Metrics.busDuration.observe({ subject, side }, secondsSince(startNs));
  if (code !== undefined) Metrics.busErrors.inc({ subject, side, code });
}

/** Wraps a client-side request so its outcome and latency are observed whatever it ends in. */
export async function observedRequest<T>(subject: string, send: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  try {
    const reply = await send();
    observeRequest(subject, 'client', start);
    return reply;
  } catch (err) {
    observeRequest(subject, 'client', start, err);
    throw err;
  }
}

/** Records a job delivery's fate; a delivery after the first is a redelivery. */
export function observeJob(queue: string, attempt: number, outcome: JobOutcome): void {
  if (attempt > 1) Metrics.queueRedeliveries.inc({ queue });
  const label = { ack: 'done', retry: 'retry', dead: 'failed', 'handed-back': 'handed_back' } as const;
  Metrics.queueJobs.inc({ queue, outcome: label[outcome.kind] });
}

/** Samples a queue's waiting jobs at every scrape while it is consumed; call the result when consuming stops. */
export function trackQueueDepth(queue: string, read: () => Promise<number> | number): () => void {
  return Metrics.queueDepth.track({ queue }, read);
}
