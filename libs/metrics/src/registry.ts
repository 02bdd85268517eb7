import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's one Prometheus registry: every service hosted in this process records into it, and the health
 * port's /metrics (and the gateway's /metrics) render it. Label values are bounded: route patterns, subjects,
 * queue and collection names, error codes, outcomes — never ids or tenants.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
// prom-client also sums each of these by-type gauges into a gauge named `…_total`, a name the exposition format keeps
// for counters (`promtool check metrics` flags it, and tools take it for a counter). The sum is
// `sum(nodejs_active_handles)` in PromQL; the by-type gauges stay.
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
  metricsRegistry.removeSingleMetric(name);
}

const registers = [metricsRegistry];
/** Seconds: from a cached health probe to a long model-backed request. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A value read when Prometheus scrapes (queue depth, store size); removed with the returned function. */
export type SampleSource = () => Promise<number | undefined> | number | undefined;

function sampledGauge(name: string, help: string, labelNames: readonly string[]) {
  const sources = new Map<string, { labels: Record<string, string>; read: SampleSource }>();
  const gauge = new Gauge({
    name,
    help,
    labelNames,
    registers,
    async collect() {
      this.reset();
      await Promise.all(
        [...sources.values()].map(async ({ labels, read }) => {
          const value = await Promise.resolve()
            .then(read)
            .catch(() => undefined);
          if (value !== undefined) this.set(labels, value);
        }),
      );
    },
  });
  return {
    gauge,
    /** Samples `read` on every scrape under these labels until the returned function is called. */
    track(labels: Record<string, string>, read: SampleSource): () => void {
      const key = JSON.stringify(labels);
      sources.set(key, { labels, read });
      return () => void sources.delete(key);
    },
  };
}

export const Metrics = {
  httpRequests: new Counter({
    name: 'alfred_http_requests_total',
    help: 'HTTP requests answered by the gateway, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  }),
  httpDuration: new Histogram({
    name: 'alfred_http_request_duration_seconds',
    help: 'HTTP request latency at the gateway, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  busRequests: new Counter({
    name: 'alfred_bus_requests_total',
    help: 'Bus requests by subject, side (client sends, server handles) and outcome (ok, error, timeout, unavailable)',
    labelNames: ['subject', 'side', 'outcome'] as const,
    registers,
  }),
  busDuration: new Histogram({
    name: 'alfred_bus_request_duration_seconds',
    help: 'Bus request latency by subject and side',
    labelNames: ['subject', 'side'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  busErrors: new Counter({
    name: 'alfred_bus_errors_total',
    help: 'Bus requests that ended in an error, by subject, side and error code (SERVICE_TIMEOUT for timeouts)',
    labelNames: ['subject', 'side', 'code'] as const,
    registers,
  }),
  queueJobs: new Counter({
    name: 'alfred_queue_jobs_total',
    help:
      'Jobs taken from a durable queue, by queue and outcome (done, retry, failed, handed_back by a ' +
      'stopping consumer)',
    labelNames: ['queue', 'outcome'] as const,
    registers,
  }),
  queueRedeliveries: new Counter({
    name: 'alfred_queue_redeliveries_total',
    help: 'Jobs delivered again after an earlier attempt, by queue',
    labelNames: ['queue'] as const,
    registers,
  }),
  queueDepth: sampledGauge('alfred_queue_depth', 'Jobs waiting in a durable queue (sampled at scrape)', ['queue']),
  sandboxExecutions: new Counter({
    name: 'alfred_sandbox_executions_total',
    help: 'Untrusted code runs in the sandbox, by kind (skill, bash) and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  }),
  sandboxDuration: new Histogram({
    name: 'alfred_sandbox_execution_duration_seconds',
    help: 'Sandboxed run time by kind',
    labelNames: ['kind'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  diskQuotaRefusals: new Counter({
    name: 'alfred_disk_quota_refusals_total',
    help: 'Writes refused and commands stopped by a disk quota, by area (workspace, skill_data)',
    labelNames: ['area'] as const,
    registers,
  }),
  diskUsage: sampledGauge(
    'alfred_disk_usage_bytes',
    'Disk held by the tenants this process measured, by area (workspace, skill_data; sampled at scrape)',
    ['area'],
  ),
  modelCalls: new Counter({
    name: 'alfred_model_calls_total',
    help: 'Model (LLM) calls by model and outcome (ok, or the error code)',
    labelNames: ['model', 'outcome'] as const,
    registers,
  }),
  modelTokens: new Counter({
    name: 'alfred_model_tokens_total',
    help: 'Model tokens by model and kind: input (uncached), cache_read, cache_write, output',
    labelNames: ['model', 'kind'] as const,
    registers,
  }),
  storeCommits: new Counter({
    name: 'alfred_store_commits_total',
    help: 'Table commits of the embedded store (each a table version), by collection: writes share them',
    labelNames: ['store', 'collection'] as const,
    registers,
  }),
  storeIndexBuilds: new Counter({
    name: 'alfred_store_index_builds_total',
    help:
      "Rebuilds of the embedded store's scalar indexes between compactions, so filtered reads do not scan the rows " +
      'written since the last one, by collection',
    labelNames: ['store', 'collection'] as const,
    registers,
  }),
  storeRows: new Counter({
    name: 'alfred_store_rows_written_total',
    help:
      'Rows the embedded store committed to its tables (after collapsing repeated writes of a document), ' +
      'by collection',
    labelNames: ['store', 'collection'] as const,
    registers,
  }),
  logRecords: new Counter({
    name: 'alfred_log_records_total',
    help: 'Records appended to a durable log (outbox: one per change; events: one per event)',
    labelNames: ['log'] as const,
    registers,
  }),
  logSyncs: new Counter({
    name: 'alfred_log_syncs_total',
    help: 'fsyncs of a durable log: appends made together share one (group commit)',
    labelNames: ['log'] as const,
    registers,
  }),
  indexLoads: new Counter({
    name: 'alfred_index_loads_total',
    help: 'Scope indexes (one tenant and agent of a collection) loaded into memory on first use, by collection',
    labelNames: ['collection'] as const,
    registers,
  }),
  indexEvictions: new Counter({
    name: 'alfred_index_evictions_total',
    help: 'Scope indexes dropped from memory to stay within the budget (least recently used first), by collection',
    labelNames: ['collection'] as const,
    registers,
  }),
  indexHits: new Counter({
    name: 'alfred_index_hits_total',
    help: 'Reads served by a scope index already in memory, by collection',
    labelNames: ['collection'] as const,
    registers,
  }),
  indexResidentBytes: sampledGauge(
    'alfred_index_resident_bytes',
    'Estimated bytes of the scope indexes in memory (sampled at scrape)',
    [],
  ),
  indexResidentScopes: sampledGauge('alfred_index_resident_scopes', 'Scope indexes in memory (sampled at scrape)', []),
  indexBudgetBytes: sampledGauge(
    'alfred_index_budget_bytes',
    'The budget the scope indexes in memory are kept within (ALFRED_MEMORY_CACHE_MB)',
    [],
  ),
  storeSize: sampledGauge('alfred_store_documents', 'Documents in a store collection (sampled at scrape)', [
    'store',
    'collection',
  ]),
};

/** Seconds since `startNs` (process.hrtime.bigint()). */
export function secondsSince(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e9;
}
