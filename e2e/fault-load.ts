import { randomUUID } from 'node:crypto';
import type { FaultReport } from '../bench/faults.bench.js';

export type { FaultReport };

/** A request that has not answered in this long counts as a hang (far above any bus timeout). */
export const HANG_MS = 15_000;
/** How long one write keeps retrying (same key, same body) before the client gives it up. */
const GIVE_UP_MS = 90_000;

export interface Tally {
  requests: number;
  hangs: number;
  gaveUp: number;
  /** Writes that met at least one error before their acknowledgement (each counted once, however many retries). */
  writesWithErrors: number;
  readonly errors: Record<string, number>;
  /** content → id of every acknowledged write. */
  readonly acked: Map<string, string>;
  /** When each write was acknowledged (ms since epoch), to time recovery. */
  readonly ackTimes: number[];
  /** The longest a write took from its first error to its acknowledgement (ms): how long its retries waited. */
  slowestRecoveryMs: number;
  /** When each error was answered (ms since epoch). */
  readonly errorTimes: number[];
}

export const newTally = (): Tally => ({
  requests: 0,
  hangs: 0,
  gaveUp: 0,
  writesWithErrors: 0,
  errors: {},
  acked: new Map(),
  ackTimes: [],
  slowestRecoveryMs: 0,
  errorTimes: [],
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One client write as a careful client makes it: an Idempotency-Key per write, retried with the same key and body on
 * 503/504/409/network errors (honouring Retry-After, capped) until it is acknowledged or GIVE_UP_MS pass. Given several
 * gateways, a client that cannot reach one (a network error) retries through the next, and stays with it (`via`).
 */
async function write(
  bases: readonly string[],
  via: { at: number },
  path: string,
  body: unknown,
  content: string,
  tally: Tally,
): Promise<void> {
  const key = randomUUID();
  const started = Date.now();
  let erred: number | undefined;
  while (Date.now() - started < GIVE_UP_MS) {
    tally.requests++;
    let status: string;
    let retryAfterMs = 200;
    try {
      const res = await fetch(`${bases[via.at % bases.length]}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(HANG_MS),
      });
      const json = (await res.json().catch(() => undefined)) as { id?: string } | undefined;
      if (res.status === 201 && json?.id) {
        tally.acked.set(content, json.id);
        tally.ackTimes.push(Date.now());
        if (erred !== undefined) tally.slowestRecoveryMs = Math.max(tally.slowestRecoveryMs, Date.now() - erred);
        return;
      }
      const hinted = Number(res.headers.get('retry-after'));
      // A 409 "still running" must say when to come back: one that does not is its own kind of failure.
      status = res.status === 409 && !(hinted > 0) ? '409 without Retry-After' : String(res.status);
      if (hinted > 0) retryAfterMs = Math.min(hinted * 1000, 500);
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TimeoutError') tally.hangs++;
      status = name === 'TimeoutError' ? 'hang' : 'network';
      via.at++;
    }
    tally.errors[status] = (tally.errors[status] ?? 0) + 1;
    tally.errorTimes.push(Date.now());
    if (erred === undefined) tally.writesWithErrors++;
    erred ??= Date.now();
    await sleep(retryAfterMs);
  }
  tally.gaveUp++;
}

/**
 * `writers` clients each making `perWriter` writes one after another; `body(content)` builds each request. With
 * several bases (gateways), each write goes to the first and moves to the next one it can reach.
 */
export async function runLoad(
  base: string | readonly string[],
  path: string,
  label: string,
  writers: number,
  perWriter: number,
  body: (content: string) => unknown,
  tally: Tally,
): Promise<void> {
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const via = { at: 0 };
      for (let i = 0; i < perWriter; i++) {
        const content = `${label} w${w} #${i}`;
        await write(typeof base === 'string' ? [base] : base, via, path, body(content), content, tally);
      }
    }),
  );
}

/** Every memory the agent holds, by content (paging through the list). */
export async function memoriesByContent(base: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (let offset = 0; ; offset += 100) {
    const res = await fetch(`${base}/memories?limit=100&offset=${offset}`);
    const page = (await res.json()) as {
      memories: Array<{ id: string; content: string }>;
      pagination: { has_more: boolean };
    };
    for (const m of page.memories) found.set(m.content, [...(found.get(m.content) ?? []), m.id]);
    if (!page.pagination.has_more) return found;
  }
}

/** Lost: acknowledged but absent (or under another id). Duplicates: extra copies of any written content. */
export function verify(
  tally: Tally,
  stored: Map<string, string[]>,
  label: string,
): { lost: number; duplicates: number } {
  let lost = 0;
  for (const [content, id] of tally.acked) if (!(stored.get(content) ?? []).includes(id)) lost++;
  let duplicates = 0;
  for (const [content, ids] of stored)
    if (content.startsWith(`${label} `) && ids.length > 1) duplicates += ids.length - 1;
  return { lost, duplicates };
}

/** A case's figures: from the client's tally and the store's verdict; healthy counts from `healthyFrom`. */
export function faultReport(
  fault: string,
  tally: Tally,
  verdict: { lost: number; duplicates: number },
  healthyFrom: number,
): FaultReport {
  return {
    fault,
    requests: tally.requests,
    acknowledged: tally.acked.size,
    ...verdict,
    gaveUp: tally.gaveUp,
    errorsByStatus: tally.errors,
    hangs: tally.hangs,
    secondsToHealthy: secondsToHealthy(tally, healthyFrom),
  };
}

/** Seconds from the fault's repair to the first write acknowledged after it. */
export function secondsToHealthy(tally: Tally, repairedAt: number): number {
  const first = tally.ackTimes.filter((t) => t >= repairedAt).sort((a, b) => a - b)[0];
  return first === undefined ? Number.POSITIVE_INFINITY : Math.round((first - repairedAt) / 100) / 10;
}

/** Resolves once `count` writes have been acknowledged (so the fault lands under load). */
export async function acknowledged(tally: Tally, count: number): Promise<void> {
  while (tally.acked.size < count) await sleep(20);
}
