import { mkdir, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { cpus, totalmem, loadavg, hostname } from 'node:os';
import { createLogger } from '#logging';
import type { BenchRow } from './load.js';
import { memoryBench } from './memory.bench.js';
import { execSkillsBench } from './exec-skills.bench.js';
import { tenantFairnessBench } from './tenant-fairness.bench.js';
import { skillsBench } from './skills.bench.js';
import { agentsBench } from './agents.bench.js';
import { agentPromptBench } from './agent-prompt.bench.js';
import { capabilitiesBench } from './capabilities.bench.js';
import { qualityBench } from './quality.bench.js';
import { mem0Bench } from './mem0.bench.js';
import { injectionBench } from './injection.bench.js';
import { faultsBench } from './faults.bench.js';
import { writesBench } from './writes.bench.js';
import { scaleBench } from './scale.bench.js';
import { startupBench } from './startup.bench.js';

/**
 * `npm run bench`: every section in one run on this machine, printed as a table; each section's rows, with the
 * machine's context, replace `bench/results/<section>.json` (the latest figures; git keeps the earlier ones, and
 * bench/results/README.md says how each is measured). ALFRED_BENCH_QUICK=1 skips the largest sizes; ALFRED_BENCH_ONLY
 * picks sections.
 */
const quick = process.env.ALFRED_BENCH_QUICK === '1';
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const logger = createLogger({ service: 'bench', level: 'silent' });

async function natsReachable(url: string): Promise<boolean> {
  const { connect } = await import('node:net');
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 4222) });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** The commit measured (with `+` when the checkout has changes), or undefined outside a git checkout. */
function commitOf(): string | undefined {
  try {
    const run = (args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = run(['status', '--porcelain', '--untracked-files=no']) !== '';
    return `${run(['rev-parse', '--short', 'HEAD'])}${dirty ? '+' : ''}`;
  } catch {
    return undefined;
  }
}

const context = {
  at: new Date().toISOString(),
  commit: commitOf(),
  host: hostname(),
  node: process.version,
  cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
  memory_gb: Math.round(totalmem() / 2 ** 30),
  loadavg_at_start: loadavg().map((l) => Math.round(l * 100) / 100),
  /** Read again at the end: the machine is shared, and other work moves the latency figures. */
  loadavg_at_end: [] as number[],
  quick,
};

const nats = (await natsReachable(natsUrl)) ? natsUrl : undefined;
if (!nats) console.log(`NATS not reachable at ${natsUrl}: NATS-mode rows are skipped`);
const ctx = { logger, quick, ...(nats ? { natsUrl: nats } : {}) };
const sections: Record<string, () => Promise<BenchRow[]>> = {
  quality: () => qualityBench(ctx),
  memory: () => memoryBench(ctx),
  writes: () => writesBench(ctx),
  scale: () => scaleBench(ctx),
  mem0: () => mem0Bench(ctx),
  'exec-skills': () => execSkillsBench(ctx),
  'tenant-fairness': () => tenantFairnessBench(ctx),
  skills: () => skillsBench(ctx),
  capabilities: () => capabilitiesBench(ctx),
  agents: () => agentsBench(ctx),
  'agent-prompt': () => agentPromptBench(ctx),
  injection: () => injectionBench(),
  startup: () => startupBench(),
  // Minutes long (real outages of 5 s and 60 s): ALFRED_BENCH_ONLY=faults runs it alone.
  faults: () => faultsBench(),
};
// ALFRED_BENCH_ONLY=memory,skills runs some sections; every section runs by default.
const only = process.env.ALFRED_BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const rows: BenchRow[] = [];
for (const [name, run] of Object.entries(sections)) if (!only || only.includes(name)) rows.push(...(await run()));

context.loadavg_at_end = loadavg().map((l) => Math.round(l * 100) / 100);
console.log(`\nAlfred benchmarks — ${context.at} — node ${context.node} — ${context.cpus}, ${context.memory_gb} GB\n`);
console.table(
  rows.map((r) => ({
    section: r.section,
    scenario: r.name,
    mode: r.mode,
    conns: r.connections,
    'req/s': r.rps,
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    errors: r.errors,
    note: r.note ?? '',
  })),
);
const measured = rows.filter((r) => r.metrics);
if (measured.length > 0)
  console.table(measured.map((r) => ({ section: r.section, scenario: r.name, mode: r.mode, ...r.metrics })));
const results = new URL('../../bench/results/', import.meta.url);
await mkdir(results, { recursive: true });
for (const section of new Set(rows.map((r) => r.section))) {
  const out = new URL(`${section}.json`, results);
  await writeFile(out, `${JSON.stringify({ context, rows: rows.filter((r) => r.section === section) }, null, 2)}\n`);
  console.log(`written to ${out.pathname}`);
}
process.exit(0);
