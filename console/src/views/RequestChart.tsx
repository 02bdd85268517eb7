import { useEffect, useRef } from 'react';
import {
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { api } from '../api';
import { ErrorBox, fmt, Section, useInterval, useLoad } from '../ui';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Legend, Tooltip);

export interface HistoryPoint {
  at: string;
  requests: number;
  errors: number;
  rate_per_s: number;
  error_rate_per_s: number;
  mean_ms: number | null;
  p95_ms: number | null;
}
interface History {
  step_seconds: number;
  window_seconds: number;
  points: HistoryPoint[];
}

const BLUE = '#0b4f9c';
const RED = '#a30000';
const ORANGE = '#b35900';

const clock = (at: string) =>
  new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/**
 * The last hour of requests, errors and latency (GET /metrics/history), refreshed every step while the screen is open.
 */
export function RequestChart() {
  const history = useLoad(() => api<History>('GET', '/metrics/history'), []);
  const step = history.data?.step_seconds ?? 10;
  useInterval(history.reload, Math.max(2, step) * 1000);
  const points = history.data?.points ?? [];
  const last = points.at(-1);
  return (
    <Section title="Requests over the last hour">
      <ErrorBox error={history.error} stale={history.data !== undefined} />
      {history.data && (
        <p className="meta" role="status">
          {points.length === 0
            ? `The first point comes after ${step} s.`
            : `${points.length} point(s), one per ${step} s; latest at ${clock(last!.at)}: ` +
              `${fmt(last!.rate_per_s, 2)} requests/s, ${last!.errors} error(s), p95 ` +
              `${last!.p95_ms === null ? '–' : `${fmt(last!.p95_ms, 0)} ms`}. Refreshed while this screen is open.`}
        </p>
      )}
      <div className="charts">
        <LineChart
          label="Request and 5xx error rate per second"
          points={points}
          series={[
            { name: 'requests/s', color: BLUE, value: (p) => p.rate_per_s },
            { name: '5xx errors/s', color: RED, value: (p) => p.error_rate_per_s },
          ]}
        />
        <LineChart
          label="Latency in milliseconds"
          points={points}
          series={[
            { name: 'mean ms', color: BLUE, value: (p) => p.mean_ms },
            { name: 'p95 ms', color: ORANGE, value: (p) => p.p95_ms },
          ]}
        />
      </div>
      <details>
        <summary>The numbers</summary>
        <div className="table-scroll">
          <table aria-label="Requests per step" className="responsive">
            <thead>
              <tr>
                <th scope="col">Until</th>
                <th scope="col">Requests</th>
                <th scope="col">5xx</th>
                <th scope="col">Mean</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {[...points]
                .reverse()
                .slice(0, 60)
                .map((p) => (
                  <tr key={p.at}>
                    <th scope="row">{clock(p.at)}</th>
                    <td data-label="Requests">{p.requests}</td>
                    <td data-label="5xx">{p.errors}</td>
                    <td data-label="Mean">{p.mean_ms === null ? '–' : `${fmt(p.mean_ms, 1)} ms`}</td>
                    <td data-label="p95">{p.p95_ms === null ? '–' : `${fmt(p.p95_ms, 1)} ms`}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </details>
    </Section>
  );
}

interface Series {
  name: string;
  color: string;
  value: (p: HistoryPoint) => number | null;
}

/** One Chart.js line chart; the canvas is an image whose label says what it shows (the table has the numbers). */
function LineChart({ label, points, series }: { label: string; points: HistoryPoint[]; series: Series[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'line'> | undefined>(undefined);
  // The chart is made once: a chart's series are fixed, and the effect below follows their values.
  // biome-ignore lint/correctness/useExhaustiveDependencies: made on mount, destroyed on unmount
  useEffect(() => {
    chart.current = new Chart(canvas.current!, {
      type: 'line',
      data: {
        labels: [],
        datasets: series.map((s) => ({
          label: s.name,
          data: [],
          borderColor: s.color,
          backgroundColor: s.color,
          pointRadius: 0,
          borderWidth: 2,
          spanGaps: true,
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: { y: { beginAtZero: true }, x: { ticks: { maxTicksLimit: 6, autoSkip: true } } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.current?.destroy();
  }, []);
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data.labels = points.map((p) => clock(p.at));
    series.forEach((s, i) => {
      c.data.datasets[i]!.data = points.map(s.value);
    });
    c.update();
  }, [points, series]);
  return (
    <figure className="chart">
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${label}, last hour (the numbers are in the table below)`} />
      </div>
      <figcaption>{label}</figcaption>
    </figure>
  );
}
