import { useState, type FormEvent, type ReactNode } from 'react';
import { api, apiText, enc } from '../api';
import { parseMetrics, routeStats, samplesOf, type Sample } from '../metrics';
import { ErrorBox, fmt, Section, useInterval, useLoad } from '../ui';
import { RequestChart } from './RequestChart';

/** Operations: service health, queues and jobs, request rates and latencies, from /health and /metrics. */
export function OperationsView() {
  const health = useLoad(
    () =>
      api<{
        status: string;
        version: string;
        services: Record<string, string>;
        model?: { configured: boolean; hint?: string };
      }>('GET', '/health'),
    [],
  );
  const metrics = useLoad(async () => parseMetrics(await apiText('/metrics')), []);
  const reload = () => {
    health.reload();
    metrics.reload();
  };
  useInterval(reload, 15_000);
  const samples = metrics.data ?? [];
  return (
    <div className="stack">
      <div className="row">
        <button type="button" onClick={reload}>
          Refresh
        </button>
        <span className="meta">Health and counters refresh every 15 s while this screen is open.</span>
      </div>
      <RequestChart />
      <Section title="Health">
        <ErrorBox error={health.error} stale={health.data !== undefined} />
        {health.data && (
          <>
            <p role="status">
              Status <strong>{health.data.status}</strong>, version {health.data.version}
              {health.data.model &&
                (health.data.model.configured ? ', model configured' : `, no model: ${health.data.model.hint ?? ''}`)}
            </p>
            <table aria-label="Services" className="responsive">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(health.data.services).map(([name, state]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td data-label="State" className={state === 'up' ? 'ok' : 'bad'}>
                      {state}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Section>
      <ErrorBox error={metrics.error} stale={metrics.data !== undefined} />
      <Section title="Queues and jobs">
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_queue_depth')}
          label="Queue depth"
          valueName="waiting"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_queue_jobs_total')}
          label="Jobs by outcome"
          valueName="jobs"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_queue_redeliveries_total')}
          label="Redeliveries"
          valueName="redelivered"
        />
        <JobLookup />
      </Section>
      <Section title="Requests">
        <table aria-label="Requests by route" className="responsive">
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col">Requests</th>
              <th scope="col">5xx</th>
              <th scope="col">Mean latency</th>
            </tr>
          </thead>
          <tbody>
            {routeStats(samples).map((r) => (
              <tr key={`${r.method} ${r.route}`}>
                <th scope="row">
                  {r.method} {r.route}
                </th>
                <td data-label="Requests">{r.requests}</td>
                <td data-label="5xx">{r.errors}</td>
                <td data-label="Mean latency">{fmt(r.meanMs, 1)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Model and sandbox">
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_model_calls_total')}
          label="Model calls"
          valueName="calls"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_sandbox_executions_total')}
          label="Sandboxed executions"
          valueName="runs"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_store_documents')}
          label="Stored documents"
          valueName="documents"
        />
      </Section>
      <Section title="Search indexes in memory">
        <IndexMemory samples={metrics.data && samples} />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_index_loads_total')}
          label="Index loads"
          valueName="loads"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_index_evictions_total')}
          label="Index evictions"
          valueName="evictions"
        />
        <SampleTable
          samples={metrics.data && samplesOf(samples, 'alfred_index_hits_total')}
          label="Index hits"
          valueName="hits"
        />
      </Section>
    </div>
  );
}

/** GET /jobs/{id}: the state of one piece of async work (a distillation's 202 names it). */
interface JobView {
  job_id: string;
  kind: string;
  agent: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  attempts: number;
  request: unknown;
  result: Record<string, unknown> | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

function JobLookup() {
  const [id, setId] = useState('');
  const [job, setJob] = useState<JobView>();
  const [error, setError] = useState<unknown>();
  const look = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      setJob(await api<JobView>('GET', `/jobs/${enc(id.trim())}`));
    } catch (err) {
      setError(err);
      setJob(undefined);
    }
  };
  return (
    <div className="job-lookup">
      <form className="row" onSubmit={look} aria-label="Job lookup">
        <label htmlFor="job-id">Job id</label>
        <input id="job-id" value={id} onChange={(e) => setId(e.target.value)} placeholder="job-distill-…" required />
        <button type="submit">Look up job</button>
      </form>
      <ErrorBox error={error} />
      {job && (
        <table aria-label={`Job ${job.job_id}`} className="job-table">
          <tbody>
            <JobRow label="Job">
              {job.job_id} ({job.kind}, agent {job.agent})
            </JobRow>
            <JobRow
              label="Status"
              className={job.status === 'failed' ? 'bad' : job.status === 'completed' ? 'ok' : undefined}
            >
              {job.status}
            </JobRow>
            <JobRow label="Attempts">{job.attempts}</JobRow>
            <JobRow label="Created">{job.created_at}</JobRow>
            <JobRow label="Updated">{job.updated_at}</JobRow>
            <JobRow label="Request">
              <code>{JSON.stringify(job.request)}</code>
            </JobRow>
            {job.result && (
              <JobRow label="Result">
                <code>{JSON.stringify(job.result)}</code>
              </JobRow>
            )}
            {job.error && (
              <JobRow label="Error" className="bad">
                {job.error}
              </JobRow>
            )}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A metric's samples; `undefined` while /metrics has not answered (then nothing is claimed about them). */
/** The scope indexes in memory against their budget (ALFRED_MEMORY_CACHE_MB). */
function IndexMemory({ samples }: { samples: Sample[] | undefined }) {
  if (!samples) return null;
  const one = (name: string) => samplesOf(samples, name)[0]?.value;
  const resident = one('alfred_index_resident_bytes');
  const budget = one('alfred_index_budget_bytes');
  if (resident === undefined || budget === undefined) return <p>Index memory: not reported by this server.</p>;
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;
  return (
    <p role="note" aria-label="Index memory">
      {one('alfred_index_resident_scopes') ?? 0} scopes in memory, {mb(resident)} of a {mb(budget)} budget (
      {((resident / budget) * 100).toFixed(0)}%).
    </p>
  );
}

function SampleTable({
  samples,
  label,
  valueName,
}: {
  samples: Sample[] | undefined;
  label: string;
  valueName: string;
}) {
  if (!samples) return null;
  if (samples.length === 0) return <p>{label}: nothing recorded yet.</p>;
  const keys = [...new Set(samples.flatMap((s) => Object.keys(s.labels)))];
  return (
    <table aria-label={label} className="responsive">
      <caption>{label}</caption>
      <thead>
        <tr>
          {keys.map((k) => (
            <th scope="col" key={k}>
              {k}
            </th>
          ))}
          <th scope="col">{valueName}</th>
        </tr>
      </thead>
      <tbody>
        {samples.map((s) => (
          <tr key={`${s.name}${JSON.stringify(s.labels)}`}>
            {keys.map((k) => (
              <td key={k} data-label={k}>
                {s.labels[k] ?? ''}
              </td>
            ))}
            <td data-label={valueName}>{s.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One labelled row of the job table. */
function JobRow({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className={className}>{children}</td>
    </tr>
  );
}
