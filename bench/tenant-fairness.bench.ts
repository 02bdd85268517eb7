import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '#logging';
import { OsSandbox } from '#sandbox';
import { startEmbedded, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { timeSequential, type BenchRow } from './load.js';

const SECTION = 'tenant-fairness';
const KEY_A = 'bench-flooder-key-0123456789';
const KEY_B = 'bench-bystander-key-012345678';
const FLOOD = 24;
const NAP_MS = 5_000;

const call = async (base: string, key: string, path: string, body: unknown): Promise<any> => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok || json.success === false) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};

/** Tenant A keeps FLOOD executions of a 5 s skill in flight (a new one as each ends) until stopped. */
function flood(alfred: RunningAlfred): { stop(): Promise<number> } {
  let running = true;
  let done = 0;
  const lane = async () => {
    while (running) {
      await call(alfred.url, KEY_A, '/executable-skills/napper/execute', {}).catch(() => undefined);
      done++;
    }
  };
  const lanes = Array.from({ length: FLOOD }, lane);
  return {
    async stop() {
      running = false;
      await Promise.all(lanes);
      return done;
    },
  };
}

/** Tenant B's trivial skills, created before anything is measured (so no registry work overlaps the timing). */
async function createBystanders(alfred: RunningAlfred, labels: readonly string[], quick: boolean): Promise<void> {
  const code = 'export async function execute(a: { n: number }) { return { success: true, result: a.n + 1 }; }';
  for (const label of labels) {
    for (let i = 0; i < (quick ? 4 : 10); i++) {
      await call(alfred.url, KEY_B, '/executable-skills', {
        id: `quick-${label}-${i}`,
        description: 'adds one',
        parameters: { n: { type: 'integer', default: 1 } },
        code,
      });
    }
  }
  await call(alfred.url, KEY_B, '/executable-skills', {
    id: 'quick-warm',
    description: 'adds one',
    parameters: { n: { type: 'integer', default: 1 } },
    code,
  });
  await call(alfred.url, KEY_B, '/executable-skills/quick-warm/execute', {});
}

/** B's latency: skills run once each (cold: a new process each), and one skill again and again (warm). */
async function bystander(alfred: RunningAlfred, label: string, quick: boolean) {
  const cold = await timeSequential(quick ? 4 : 10, (i) =>
    call(alfred.url, KEY_B, `/executable-skills/quick-${label}-${i}/execute`, {}),
  );
  const warm = await timeSequential(quick ? 20 : 60, () =>
    call(alfred.url, KEY_B, '/executable-skills/quick-warm/execute', {}),
  );
  return { cold, warm };
}

/**
 * Tenant B's trivial skill on an idle runner, then while tenant A keeps 24 executions of a 5 s skill in flight (the
 * issue's flood): with the runner's default per-tenant share (half its slots) and, for contrast, with a tenant
 * allowed every slot. Target: B's flooded p50 at most 2x its idle p50, in the same run.
 */
export async function tenantFairnessBench(options: { logger: Logger; quick: boolean }): Promise<BenchRow[]> {
  if (!(await OsSandbox.probe()).available) return [];
  const rows: BenchRow[] = [];
  for (const share of ['default (4 of 8)', '8 of 8']) {
    const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-fair-'));
    const env = {
      ALFRED_DATA_DIR: dataDir,
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'silent',
      ALFRED_SKILLS_WATCH: 'false',
      ALFRED_PROJECT_DIR: dataDir,
      ALFRED_HOME_DIR: dataDir,
      ALFRED_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`,
      ALFRED_SKILL_CONCURRENCY: '8',
      ...(share.startsWith('8') ? { ALFRED_SKILL_TENANT_CONCURRENCY: '8' } : {}),
    };
    const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger: options.logger, port: 0 });
    try {
      await call(alfred.url, KEY_A, '/executable-skills', {
        id: 'napper',
        description: 'naps',
        timeoutMs: 30_000,
        code:
          `export async function execute() { await new Promise((r) => setTimeout(r, ${NAP_MS})); return ` +
          `{ success: true }; }`,
      });
      await createBystanders(alfred, ['idle', 'flooded'], options.quick);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const idle = await bystander(alfred, 'idle', options.quick);
      const flooding = flood(alfred);
      // Let the flood fill the runner's slots and queue before measuring.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const flooded = await bystander(alfred, 'flooded', options.quick);
      const floodRuns = await flooding.stop();
      for (const kind of ['cold', 'warm'] as const) {
        const ratio = Math.round((flooded[kind].p50 / idle[kind].p50) * 100) / 100;
        rows.push({
          section: SECTION,
          name: `tenant B trivial skill (${kind}) while tenant A floods`,
          mode: `per-tenant share ${share}`,
          connections: 1,
          rps: Math.round(1000 / flooded[kind].mean),
          p50: flooded[kind].p50,
          p99: flooded[kind].p99,
          errors: 0,
          note:
            `idle p50 ${idle[kind].p50} ms, p99 ${idle[kind].p99} ms; flooded/idle p50 ${ratio}x (target ` +
            `<= 2x); A: ${FLOOD} x ${NAP_MS / 1000} s skills in flight, ${floodRuns} ran`,
          metrics: {
            idle_p50_ms: idle[kind].p50,
            flooded_p50_ms: flooded[kind].p50,
            idle_p99_ms: idle[kind].p99,
            flooded_p99_ms: flooded[kind].p99,
            p50_ratio: ratio,
          },
        });
      }
    } finally {
      await alfred.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return rows;
}
