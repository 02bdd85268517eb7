import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { MetricsHistory, MetricsHistoryPoint } from '#contracts';
import { Metrics } from '#metrics';

/** Cumulative counts read from the gateway's request counter and latency histogram at one moment. */
interface Totals {
  readonly at: number;
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly observed: number;
  /** Cumulative observations per histogram bound (`le`, +Inf last), summed over routes. */
  readonly buckets: ReadonlyMap<number, number>;
}

const HOUR_MS = 3_600_000;

/**
 * The last hour of the gateway's request rate, 5xx rate and latency, one point per step, sampled from the same
 * counters /metrics exposes (so the console's chart and a Prometheus scrape agree). Kept in this process only:
 * each gateway instance charts the requests it answered.
 */
export class RequestHistory implements OnModuleInit, OnApplicationShutdown {
  private readonly points: MetricsHistoryPoint[] = [];
  private last?: Totals;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly stepMs: number,
    private readonly windowMs = HOUR_MS,
    private readonly now: () => number = Date.now,
  ) {}

  onModuleInit(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.stepMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  view(): MetricsHistory {
    return { step_seconds: this.stepMs / 1000, window_seconds: this.windowMs / 1000, points: [...this.points] };
  }

  /** Adds the point since the previous sample and forgets points older than the window. */
  async sample(): Promise<void> {
    const totals = await readTotals(this.now());
    if (this.last) this.points.push(pointBetween(this.last, totals));
    this.last = totals;
    const oldest = totals.at - this.windowMs;
    while (this.points.length > 0 && Date.parse(this.points[0]!.at) < oldest) this.points.shift();
  }
}

async function readTotals(at: number): Promise<Totals> {
  const [requests, durations] = await Promise.all([Metrics.httpRequests.get(), Metrics.httpDuration.get()]);
  let total = 0;
  let errors = 0;
  for (const v of requests.values) {
    total += v.value;
    if (Number(v.labels.status) >= 500) errors += v.value;
  }
  let seconds = 0;
  let observed = 0;
  const buckets = new Map<number, number>();
  for (const v of durations.values) {
    const name = (v as { metricName?: string }).metricName ?? '';
    if (name.endsWith('_sum')) seconds += v.value;
    else if (name.endsWith('_count')) observed += v.value;
    else if (name.endsWith('_bucket')) {
      const bound = (v.labels as Record<string, string | number | undefined>).le;
      const le = bound === '+Inf' ? Infinity : Number(bound);
      buckets.set(le, (buckets.get(le) ?? 0) + v.value);
    }
  }
  return { at, requests: total, errors, seconds, observed, buckets };
}

function pointBetween(a: Totals, b: Totals): MetricsHistoryPoint {
  const span = Math.max(1, b.at - a.at) / 1000;
  const requests = b.requests - a.requests;
  const errors = b.errors - a.errors;
  const observed = b.observed - a.observed;
  return {
    at: new Date(b.at).toISOString(),
    requests,
    errors,
    rate_per_s: requests / span,
    error_rate_per_s: errors / span,
    mean_ms: observed > 0 ? ((b.seconds - a.seconds) / observed) * 1000 : null,
    p95_ms: observed > 0 ? quantileMs(a.buckets, b.buckets, observed, 0.95) : null,
  };
}

/** The quantile of the step's observations, linear within its histogram bucket (as Prometheus' histogram_quantile). */
export function quantileMs(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  observed: number,
  q: number,
): number {
  const bounds = [...after.keys()].sort((x, y) => x - y);
  const rank = q * observed;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const count = (after.get(le) ?? 0) - (before.get(le) ?? 0);
    if (count >= rank) {
      // Past the last finite bound Prometheus answers that bound: the histogram knows nothing beyond it.
      if (!Number.isFinite(le)) return lower * 1000;
      const inBucket = count - below;
      return (lower + (le - lower) * (inBucket > 0 ? (rank - below) / inBucket : 1)) * 1000;
    }
    lower = le;
    below = count;
  }
  return lower * 1000;
}
