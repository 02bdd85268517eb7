import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './load.js';

/** The fault suites whose figures this section reports (the cluster suite only where it exists in this checkout). */
const SUITES = ['e2e/fault-suite.e2e-spec.ts', 'e2e/fault-cluster.e2e-spec.ts'];

/**
 * What a fault case measured (e2e/fault-load.ts builds it; it lives here because the image builds bench/, not e2e/).
 */
export interface FaultReport {
  readonly fault: string;
  readonly requests: number;
  readonly acknowledged: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly gaveUp: number;
  readonly errorsByStatus: Record<string, number>;
  readonly hangs: number;
  readonly secondsToHealthy: number;
}

/**
 * The fault suites' figures in the bench output: each suite runs as the tests run it (real processes, a NATS and a
 * Redis server of its own), writing its report to ALFRED_FAULT_REPORT; one row per fault. Takes several minutes.
 */
export async function faultsBench(): Promise<BenchRow[]> {
  const root = [fileURLToPath(new URL('../..', import.meta.url)), fileURLToPath(new URL('..', import.meta.url))].find(
    (d) => existsSync(join(d, 'jest.config.js')),
  )!;
  const dir = await mkdtemp(join(tmpdir(), 'alfred-bench-faults-'));
  const rows: BenchRow[] = [];
  try {
    for (const suite of SUITES.filter((s) => existsSync(join(root, s)))) {
      const report = join(dir, `${suite.replace(/\W+/g, '-')}.json`);
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', suite], {
          cwd: root,
          env: { ...process.env, ALFRED_FAULT_REPORT: report },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        child.once('exit', resolve);
      });
      const reports = existsSync(report) ? (JSON.parse(await readFile(report, 'utf8')) as FaultReport[]) : [];
      for (const r of reports) {
        const errors = Object.values(r.errorsByStatus).reduce((a, b) => a + b, 0);
        rows.push({
          section: 'faults',
          name: r.fault,
          mode: suite.includes('cluster') ? 'nats-cluster' : 'nats',
          connections: 0,
          rps: 0,
          p50: 0,
          p99: 0,
          errors,
          note: code === 0 ? '' : `suite exited ${code}`,
          metrics: {
            requests: r.requests,
            acknowledged: r.acknowledged,
            lost: r.lost,
            duplicates: r.duplicates,
            hangs: r.hangs,
            gave_up: r.gaveUp,
            errors_by_status: JSON.stringify(r.errorsByStatus),
            seconds_to_healthy: r.secondsToHealthy,
          },
        });
      }
      if (reports.length === 0)
        rows.push({
          section: 'faults',
          name: suite,
          mode: 'nats',
          connections: 0,
          rps: 0,
          p50: 0,
          p99: 0,
          errors: 1,
          note: `no report (exit ${code})`,
        });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
