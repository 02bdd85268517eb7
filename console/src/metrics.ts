/** One sample of the Prometheus text exposition. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Parses `/metrics` (text format 0.0.4): comments skipped, label values unescaped. */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Requests, errors and mean latency per route, from the gateway's counters and histogram. */
export interface RouteStats {
  readonly route: string;
  readonly method: string;
  readonly requests: number;
  readonly errors: number;
  readonly meanMs: number;
}

export function routeStats(samples: readonly Sample[]): RouteStats[] {
  const byKey = new Map<
    string,
    { route: string; method: string; requests: number; errors: number; sum: number; count: number }
  >();
  const entry = (s: Sample) => {
    const k = `${s.labels.method} ${s.labels.route}`;
    let e = byKey.get(k);
    if (!e)
      byKey.set(
        k,
        (e = { route: s.labels.route ?? '', method: s.labels.method ?? '', requests: 0, errors: 0, sum: 0, count: 0 }),
      );
    return e;
  };
  for (const s of samples) {
    if (s.name === 'alfred_http_requests_total') {
      const e = entry(s);
      e.requests += s.value;
      if (Number(s.labels.status) >= 500) e.errors += s.value;
    } else if (s.name === 'alfred_http_request_duration_seconds_sum') entry(s).sum += s.value;
    else if (s.name === 'alfred_http_request_duration_seconds_count') entry(s).count += s.value;
  }
  return [...byKey.values()]
    .map((e) => ({
      route: e.route,
      method: e.method,
      requests: e.requests,
      errors: e.errors,
      meanMs: e.count ? (e.sum / e.count) * 1000 : 0,
    }))
    .sort((a, b) => b.requests - a.requests);
}

/** The samples of one metric, for a small table (queue depths, jobs by outcome, model calls). */
export function samplesOf(samples: readonly Sample[], name: string): Sample[] {
  return samples.filter((s) => s.name === name);
}
