import autocannon from 'autocannon';

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
export async function timeSequential(times: number, fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number; mean: number }> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: round(at(0.5)), p99: round(at(0.99)), mean: round(samples.reduce((a, b) => a + b, 0) / samples.length) };
}

export const round = (n: number) => Math.round(n * 1000) / 1000;
