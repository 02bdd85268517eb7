import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AGENT_REGISTRY_BUCKET, KvAgentStore } from '#agent-registry';
import { NatsBus, NatsKvStore } from '#bus';
import type { Logger } from '#logging';
import { generatedText, prng } from '#vector-store';
import { startOverNats } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { serviceEntry, startAlfredProcess, startServiceProcess, type AlfredProcess } from './alfred-process.js';
import { createAgent, load, round, timeSequential, type BenchRow } from './load.js';

const SECTION = 'writes';
const HEADERS = { 'content-type': 'application/json', 'x-alfred-agent': 'bench' };

/** The disk's own durable-append rate, in the folder the data lives in: 200-byte appends, each fdatasync'ed. */
async function fsyncRate(dir: string, times = 2_000): Promise<{ perSecond: number; p50: number; p99: number }> {
  const fh = await open(join(dir, 'fsync-probe'), 'a');
  const line = Buffer.alloc(200, 'x');
  try {
    const t = await timeSequential(times, async () => {
      await fh.write(line);
      await fh.datasync();
    });
    return { perSecond: Math.round(1000 / t.mean), p50: t.p50, p99: t.p99 };
  } finally {
    await fh.close();
    await rm(join(dir, 'fsync-probe'), { force: true });
  }
}

async function post(url: string, body: unknown, agent = 'bench'): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, 'x-alfred-agent': agent },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** Single memory writes from 16 connections for 10 s. */
function sixteenWriters(url: string, mode: string): Promise<BenchRow> {
  return load(SECTION, 'POST /memories', mode, {
    url: `${url}/memories`,
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ content: 'The user likes espresso in the morning', importance: 0.6, tags: ['coffee'] }),
    connections: 16,
    duration: 10,
  });
}

const duBytes = (dir: string) => Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);

/** Runs `tasks` with `concurrency` at a time. */
async function pooled(tasks: ReadonlyArray<() => Promise<void>>, concurrency: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

/** Memories per second of batch writes, with the data folder's largest size while they ran (sampled). */
async function batches(
  alfred: AlfredProcess,
  dataDir: string,
  plan: Array<{ agent: string; size: number }>,
  random: () => number,
) {
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, duBytes(dataDir))), 1_000);
  const started = performance.now();
  try {
    await pooled(
      plan.map(
        ({ agent, size }) =>
          () =>
            post(
              `${alfred.url}/memories/batch`,
              { memories: Array.from({ length: size }, () => ({ content: generatedText(random) })) },
              agent,
            ),
      ),
      4,
    );
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const memories = plan.reduce((n, p) => n + p.size, 0);
  return { perSecond: Math.round(memories / seconds), memories, peak: Math.max(peak, duBytes(dataDir)) };
}

function row(
  name: string,
  mode: string,
  connections: number,
  rps: number,
  p50: number,
  p99: number,
  note: string,
  metrics?: Record<string, number | string>,
): BenchRow {
  return { section: SECTION, name, mode, connections, rps, p50, p99, errors: 0, note, ...(metrics ? { metrics } : {}) };
}

/**
 * The write path against the disk it writes to: single writes (1 and 16 connections) beside the disk's fsync rate
 * measured in the same run, batches for one agent and over 1,000 agents, the server's RSS after the burst beside its
 * RSS after a restart on the same data, and the data folder's size during and after.
 */
export async function writesBench(ctx: { logger: Logger; natsUrl?: string; quick: boolean }): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-writes-'));
  const random = prng(11);
  const rows: BenchRow[] = [];
  const disk = await fsyncRate(dataDir);
  rows.push(
    row(
      'append 200 B + fdatasync (this disk)',
      'none',
      1,
      disk.perSecond,
      disk.p50,
      disk.p99,
      'baseline: the floor of one durable write',
    ),
  );
  let alfred = await startAlfredProcess(dataDir);
  try {
    await createAgent(alfred.url, 'bench');
    const emptyRss = await alfred.rssMb();
    let i = 0;
    const one = () =>
      post(`${alfred.url}/memories`, {
        content: `The user likes espresso number ${i++} in the morning`,
        importance: 0.6,
        tags: ['coffee'],
      });
    for (let w = 0; w < 200; w++) await one();
    const seq = await timeSequential(2_000, one);
    const target1 = Math.max(3, round(6 * disk.p50));
    rows.push(
      row(
        'POST /memories',
        'embedded',
        1,
        Math.round(1000 / seq.mean),
        seq.p50,
        seq.p99,
        `p50 = ${round(seq.p50 / disk.p50)} fsyncs; target p50 ≤ max(3 ms, 6 fsyncs) = ${target1} ms`,
      ),
    );
    const sixteen = await sixteenWriters(alfred.url, 'embedded');
    rows.push({
      ...sixteen,
      note:
        `${round(sixteen.rps / disk.perSecond)}× this disk's fsyncs/s; target ≥ 0.5× = ` +
        `${Math.round(disk.perSecond / 2)}/s`,
    });

    const total = ctx.quick ? 20_000 : 100_000;
    const one500 = await batches(
      alfred,
      dataDir,
      Array.from({ length: total / 500 }, () => ({ agent: 'bench', size: 500 })),
      random,
    );
    rows.push(
      row(
        'POST /memories/batch (500), one agent',
        'embedded',
        4,
        one500.perSecond,
        0,
        0,
        `${one500.memories} memories; target ≥ 5,000/s`,
      ),
    );
    const agents = Array.from({ length: 1_000 }, (_, k) => `agent-${k}`);
    await pooled(
      agents.map((a) => () => createAgent(alfred.url, a)),
      8,
    );
    const spread = await batches(
      alfred,
      dataDir,
      agents.map((agent) => ({ agent, size: total / 1_000 })),
      random,
    );
    rows.push(
      row(
        `POST /memories/batch (${total / 1_000}), 1,000 agents`,
        'embedded',
        4,
        spread.perSecond,
        0,
        0,
        `${spread.memories} memories; target ≥ 3,000/s`,
      ),
    );

    const written = i + sixteen.rps * 10 + one500.memories + spread.memories;
    const burstRss = await alfred.rssMb();
    const peakKb = round(Math.max(one500.peak, spread.peak) / written / 1024);
    await alfred.stop();
    const afterKb = round(duBytes(dataDir) / written / 1024);
    alfred = await startAlfredProcess(dataDir);
    const restartIdle = await alfred.rssMb();
    // The same indexes resident as after the burst: one search per agent that was written.
    for (const a of ['bench', ...agents])
      await fetch(`${alfred.url}/search?q=morning`, { headers: { 'x-alfred-agent': a } }).then((r) => r.arrayBuffer());
    const restartWarm = await alfred.rssMb();
    rows.push(
      row(
        'RSS after the burst vs after a restart',
        'embedded',
        0,
        0,
        0,
        0,
        `target burst ≤ 1.5× restart with the same indexes loaded`,
        {
          memories: written,
          empty_start_mb: emptyRss,
          after_burst_mb: burstRss,
          restart_idle_mb: restartIdle,
          restart_indexes_loaded_mb: restartWarm,
          ratio: round(burstRss / restartWarm),
        },
      ),
    );
    rows.push(
      row('data folder per memory', 'embedded', 0, 0, 0, 0, 'target ≤ 8 KB during and after', {
        memories: written,
        peak_during_kb: peakKb,
        after_kb: afterKb,
      }),
    );
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  if (ctx.natsUrl) {
    rows.push(await distributed(ctx.logger, ctx.natsUrl, disk.perSecond));
    rows.push(await separateProcesses(ctx.logger, ctx.natsUrl, disk.perSecond));
  }
  return rows;
}

/**
 * Gateway and memory each in its own process, as a distributed deployment runs them, over NATS on this machine. The
 * writers' agent is put in the registry bucket directly (agent-runtime, which would create it, needs Redis).
 */
async function separateProcesses(logger: Logger, natsUrl: string, fsyncs: number): Promise<BenchRow> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-writes-processes-'));
  const subjectPrefix = `bench-${randomUUID().slice(0, 8)}.`;
  const env = { NATS_URL: natsUrl, ALFRED_SUBJECT_PREFIX: subjectPrefix, ALFRED_BUS_TIMEOUT_MS: '30000' };
  const bus = await NatsBus.connect({ url: natsUrl, name: 'bench-writes', logger, subjectPrefix });
  const registry = new KvAgentStore(new NatsKvStore(bus.nc, bus.stream(AGENT_REGISTRY_BUCKET), { replicas: 1 }));
  const now = new Date().toISOString();
  await registry.create('default', { name: 'bench', persona: '', created_at: now, updated_at: now });
  const memory = startServiceProcess('memory', { ...env, ALFRED_DATA_DIR: join(dataDir, 'memory') });
  const gateway = await startAlfredProcess(join(dataDir, 'gateway'), env, serviceEntry('gateway'));
  try {
    const r = await sixteenWriters(gateway.url, 'nats');
    return {
      ...r,
      note:
        `gateway and memory in processes of their own, over NATS; ${round(r.rps / fsyncs)}× this disk's fsyncs/s; ` +
        'target ≥ 1,000/s',
    };
  } finally {
    await gateway.stop();
    await memory.stop();
    await bus.close(2_000);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Gateway → NATS → memory (on the embedded store) in one process: the same write path across the broker. */
async function distributed(logger: Logger, natsUrl: string, fsyncs: number): Promise<BenchRow> {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-writes-nats-'));
  const env = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ALFRED_BUS_TIMEOUT_MS: '30000',
  };
  const alfred = await startOverNats({
    env,
    gateway: loadGatewayConfig(env),
    logger,
    port: 0,
    natsUrl,
    subjectPrefix: `bench-${randomUUID().slice(0, 8)}.`,
    ephemeral: true,
  });
  try {
    await createAgent(alfred.url, 'bench');
    const r = await sixteenWriters(alfred.url, 'nats');
    return {
      ...r,
      note: `gateway + NATS + memory in one process; ${round(r.rps / fsyncs)}× this disk's fsyncs/s; target ≥ 1,000/s`,
    };
  } finally {
    await alfred.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
