import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { HashingEmbedder } from '#embeddings';
import { generatedText, LanceDbStore, prng, ResidentBudget } from '#vector-store';
import { memoryCollectionSpec, toDoc, type MemoryRecord } from '../services/memory/src/memory.repository.js';
import { startAlfredProcess } from './alfred-process.js';
import { createAgent, round, timeSequential, type BenchRow } from './load.js';
import { locomoLengthQuery } from './memory.bench.js';

const SECTION = 'scale';
const TENANT = 'default';
const embedder = new HashingEmbedder();

/** Agents the bench names: `alfred`, the default agent, needs no creation; the others are created through the API. */
const agentName = (i: number, agents: number) => (agents === 1 ? 'alfred' : `agent-${i}`);

/**
 * Fills a data folder with `memories` memories spread evenly over `agents` agents, written to the store directly (the
 * shape the memory service writes; bulk appends, so a million takes a minute rather than the API's several).
 */
async function fill(dataDir: string, memories: number, agents: number, random: () => number): Promise<void> {
  const store = new LanceDbStore({ dir: join(dataDir, 'vectors'), budget: new ResidentBudget(1) });
  const collection = await store.open(memoryCollectionSpec(embedder.id, embedder.dimension));
  const started = Date.parse('2026-01-01T00:00:00Z');
  const batch = 10_000;
  for (let at = 0; at < memories; at += batch) {
    const n = Math.min(batch, memories - at);
    const records: Array<{ agent: string; record: MemoryRecord }> = Array.from({ length: n }, (_, k) => {
      const i = at + k;
      const timestamp = new Date(started + i * 1000).toISOString();
      const agent = agentName(i % agents, agents);
      return {
        agent,
        record: {
          id: randomUUID(),
          content: generatedText(random),
          date: timestamp.slice(0, 10),
          timestamp,
          importance: 0.5,
          tags: [],
          source: 'daily',
          version: 1,
        },
      };
    });
    const vectors = await embedder.embed(records.map((r) => r.record.content));
    await collection.insert(records.map((r, k) => toDoc({ tenant: TENANT, agent: r.agent }, r.record, vectors[k]!)));
  }
  await store.close();
}

/** One growth-table row: what a start on this data costs, and how searches of its agents answer. */
async function measure(
  dataDir: string,
  memories: number,
  agents: number,
  empty: { startMs: number; rssMb: number },
  random: () => number,
): Promise<BenchRow[]> {
  // Agents exist through the API (their records are the agent service's), made once on a first start.
  let alfred = await startAlfredProcess(dataDir);
  for (let i = 0; i < agents && agents > 1; i += 16)
    await Promise.all(
      Array.from({ length: Math.min(16, agents - i) }, (_, k) => createAgent(alfred.url, agentName(i + k, agents))),
    );
  await alfred.stop();
  alfred = await startAlfredProcess(dataDir);
  const rows: BenchRow[] = [];
  try {
    const idle = await alfred.rssMb();
    const label =
      `${memories.toLocaleString('en')} memories, ${agents.toLocaleString('en')} ` + `agent${agents > 1 ? 's' : ''}`;
    const search = (agent: string) =>
      fetch(`${alfred.url}/search?q=${encodeURIComponent(locomoLengthQuery(random))}`, {
        headers: { 'x-alfred-agent': agent },
      }).then((r) => r.arrayBuffer());
    const cold = await timeSequential(Math.min(50, agents), (i) => search(agentName(i, agents)));
    const warmAgent = agentName(0, agents);
    for (let i = 0; i < 200; i++) await search(warmAgent);
    const warm = await timeSequential(500, () => search(warmAgent));
    rows.push({
      section: SECTION,
      name: label,
      mode: 'embedded',
      connections: 1,
      rps: 0,
      p50: warm.p50,
      p99: warm.p99,
      errors: 0,
      note:
        `start ${round(alfred.startMs / empty.startMs)}× empty, idle RSS ${round(idle / empty.rssMb)}× ` +
        `empty; cold first search of an agent (${memories / agents} memories) p50 ${cold.p50} ms; warm p50/p99 above`,
      metrics: {
        start_ms: alfred.startMs,
        idle_rss_mb: idle,
        cold_first_search_p50_ms: cold.p50,
        cold_first_search_p99_ms: cold.p99,
        warm_p50_ms: warm.p50,
        warm_p99_ms: warm.p99,
        data_mb: Math.round(duBytes(dataDir) / 2 ** 20),
      },
    });
  } finally {
    await alfred.stop();
  }
  return rows;
}

/** Every agent searched in turn with a small budget: RSS samples against the budget plus the empty start's RSS. */
async function inTurn(
  dataDir: string,
  agents: number,
  stored: number,
  budgetMb: number,
  emptyRss: number,
  random: () => number,
): Promise<BenchRow> {
  const alfred = await startAlfredProcess(dataDir, { ALFRED_MEMORY_CACHE_MB: String(budgetMb) });
  let peak = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < agents; i++) {
      await fetch(`${alfred.url}/search?q=${encodeURIComponent(locomoLengthQuery(random))}`, {
        headers: { 'x-alfred-agent': agentName(i, stored) },
      }).then((r) => r.arrayBuffer());
      if (i % 250 === 0) peak = Math.max(peak, await alfred.rssMb());
    }
    peak = Math.max(peak, await alfred.rssMb());
  } finally {
    await alfred.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    section: SECTION,
    name:
      `${agents.toLocaleString('en')} of ${stored.toLocaleString('en')} agents searched in turn, ` +
      `budget ${budgetMb} MB`,
    mode: 'embedded',
    connections: 1,
    rps: Math.round(agents / seconds),
    p50: 0,
    p99: 0,
    errors: 0,
    note:
      `peak RSS ${peak} MB = budget + ${peak - budgetMb} MB (the empty start is ${emptyRss} MB); target ` +
      `≤ budget + a fixed overhead`,
    metrics: { peak_rss_mb: peak, empty_rss_mb: emptyRss, budget_mb: budgetMb, over_budget_mb: peak - budgetMb },
  };
}

/** `ALFRED_BENCH_SCALE_GRID=1000000x10000,100000x1` measures only those rows (memories x agents) of the grid. */
function chosenGrid(spec: string): Array<[number, number]> {
  return spec.split(',').map((cell) => {
    const [memories, agents] = cell.split('x').map(Number);
    if (!Number.isInteger(memories) || !Number.isInteger(agents) || memories! < agents! || agents! < 1)
      throw new Error(`ALFRED_BENCH_SCALE_GRID: "${cell}" is not <memories>x<agents>`);
    return [memories!, agents!];
  });
}

const duBytes = (dir: string) => Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);

/**
 * Cost that grows with what is stored, or with what is used: start to /health and idle RSS beside an empty start, a
 * cold agent's first search, warm search at one agent's size, and RSS while every agent is searched within a budget.
 */
export async function scaleBench(ctx: { quick: boolean }): Promise<BenchRow[]> {
  const random = prng(23);
  const emptyDir = await mkdtemp(join(tmpdir(), 'alfred-bench-scale-empty-'));
  const emptyProcess = await startAlfredProcess(emptyDir);
  const empty = { startMs: emptyProcess.startMs, rssMb: await emptyProcess.rssMb() };
  await emptyProcess.stop();
  await rm(emptyDir, { recursive: true, force: true });
  const rows: BenchRow[] = [
    {
      section: SECTION,
      name: 'empty data folder',
      mode: 'embedded',
      connections: 0,
      rps: 0,
      p50: 0,
      p99: 0,
      errors: 0,
      note: 'baseline',
      metrics: { start_ms: empty.startMs, idle_rss_mb: empty.rssMb },
    },
  ];
  const grid: Array<[memories: number, agents: number]> = process.env.ALFRED_BENCH_SCALE_GRID
    ? chosenGrid(process.env.ALFRED_BENCH_SCALE_GRID)
    : ctx.quick
      ? [
          [10_000, 1],
          [100_000, 1],
          [100_000, 1_000],
        ]
      : [
          [10_000, 1],
          [10_000, 1_000],
          [100_000, 1],
          [100_000, 1_000],
          [100_000, 10_000],
          [1_000_000, 1_000],
          [1_000_000, 10_000],
        ];
  for (const [memories, agents] of grid) {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-bench-scale-'));
    try {
      await fill(dir, memories, agents, random);
      rows.push(...(await measure(dir, memories, agents, empty, random)));
      // Two budgets: what RSS adds beyond the budget is the fixed overhead when it is the same for both. On the most
      // agents only, and the first 3,000 of them: each is a cold load (~0.1 s at a million rows), and by then both
      // budgets (~300 and ~1,300 agents of 100 memories) have been filled and evicted from many times over.
      if (agents === (ctx.quick ? 1_000 : 10_000) && memories === (ctx.quick ? 100_000 : 1_000_000))
        for (const mb of [64, 256])
          rows.push(await inTurn(dir, Math.min(agents, 3_000), agents, mb, empty.rssMb, random));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
