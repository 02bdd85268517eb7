import autocannon from 'autocannon';
import { Pool } from 'undici';

type Options = autocannon.Options;

/** One measured scenario: requests/s and latency percentiles in milliseconds. */
export interface BenchRow {
  readonly section: string;
  readonly name: string;
  readonly mode: string;
  readonly connections: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly note?: string;
  /** For gateway rows: the bare handler's p50 in the same run, and p50 minus it. */
  readonly baselineP50?: number;
  readonly overheadP50?: number;
  /** Quality and comparison figures (recall, ratios) of rows that are not only latency. */
  readonly metrics?: Readonly<Record<string, number | string>>;
}

/** Runs autocannon against a loopback URL; a run with failed responses is reported, not hidden. */
export async function load(
  section: string,
  name: string,
  mode: string,
  options: Options & { connections: number },
  note?: string,
): Promise<BenchRow> {
  const result = await autocannon({ duration: 5, ...options });
  return {
    section,
    name,
    mode,
    connections: options.connections,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    ...(note ? { note } : {}),
  };
}

/** Sequential timing of an async call, for latency where a load generator adds noise. */
export async function timeSequential(
  times: number,
  fn: (i: number) => Promise<unknown>,
): Promise<{ p50: number; p99: number; mean: number }> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return {
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    mean: round(samples.reduce((a, b) => a + b, 0) / samples.length),
  };
}

export const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * One connection, one request at a time, timed on the client with microsecond precision (autocannon's
 * percentiles are whole milliseconds, which hides sub-millisecond overheads). Warm-up requests are not
 * counted; a non-2xx answer counts as an error.
 */
export async function sequentialHttp(
  row: { section: string; name: string; mode: string; note?: string },
  url: string,
  options: { times: number; headers?: Record<string, string>; path?: (i: number) => string; warmup?: number },
): Promise<BenchRow> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1, pipelining: 1 });
  let errors = 0;
  const once = async (i: number) => {
    const res = await pool.request({
      method: 'GET',
      path: options.path?.(i) ?? `${target.pathname}${target.search}`,
      headers: options.headers ?? {},
    });
    await res.body.dump();
    if (res.statusCode >= 300) errors++;
  };
  try {
    for (let i = 0; i < (options.warmup ?? 200); i++) await once(i);
    errors = 0;
    const t = await timeSequential(options.times, once);
    return { ...row, connections: 1, rps: Math.round(1000 / t.mean), p50: t.p50, p99: t.p99, errors };
  } finally {
    await pool.close();
  }
}

/** The same row with the overhead over a baseline p50 stated explicitly (in the JSON and the note). */
export function withOverhead(row: BenchRow, baseline: BenchRow): BenchRow {
  const overheadP50 = round(row.p50 - baseline.p50);
  const note = `bare p50 ${baseline.p50} ms → overhead +${overheadP50} ms${row.note ? `; ${row.note}` : ''}`;
  return { ...row, baselineP50: baseline.p50, overheadP50, note };
}

/** Creates a named agent (memories belong to agents that exist); one that already exists is fine. */
export async function createAgent(url: string, name: string): Promise<void> {
  const res = await fetch(`${url}/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (!res.ok && res.status !== 409) throw new Error(`POST /agents ${name}: ${res.status} ${await res.text()}`);
}
