import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TurnRoutes } from '#contracts';
import { NatsBus } from '#bus';
import { createLogger, type Logger } from '#logging';
import { hostService } from '#runtime';
// The loopback model directly, not through #testing: that entry also holds jest suites, which stay out of the build.
import { AnthropicLoopback } from '../libs/testing/src/anthropic-loopback.js';
import { agentRuntimeService } from '../services/agent-runtime/src/agent-runtime.module.js';
import { startOverNats, type RunningAlfred } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import type { BenchRow } from './load.js';

const SECTION = 'agents';

export interface TurnScalingOptions {
  /** Worker counts measured in order (workers are added between phases). */
  readonly workers: readonly number[];
  /** Concurrent sessions, each running turns back to back for the whole phase (closed loop). */
  readonly sessions: number;
  /** Turns finishing in the warm-up are not counted; the window is the steady state that is. */
  readonly warmupMs: number;
  readonly windowMs: number;
  /** The loopback model's fixed latency per call: it, not CPU, must bound a worker. */
  readonly modelLatencyMs: number;
  /** Turns one worker runs at once (ALFRED_MAX_CONCURRENT_TURNS). */
  readonly perWorker: number;
}

export interface TurnScalingRow {
  readonly workers: number;
  readonly turns: number;
  readonly seconds: number;
  readonly turnsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  /** Turns each worker started during the phase (warm-up included), in the order the workers were added. */
  readonly startedPerWorker: number[];
}

async function turn(url: string, session: string): Promise<{ ok: boolean; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${url}/sessions/${session}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ message: 'What is next on my list?' }),
  });
  const body = (await res.json()) as { status?: string };
  if (process.env.ALFRED_BENCH_DEBUG && !(res.status === 200 && body.status === 'completed'))
    console.log(res.status, JSON.stringify(body));
  return { ok: res.status === 200 && body.status === 'completed', ms: performance.now() - start };
}

const percentile = (sorted: number[], p: number) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

/**
 * 1, 2, 4… agent-runtime workers (each its own NATS connection, one queue group, state in Redis) against the
 * loopback model with a fixed latency; N sessions run turns concurrently through the gateway (JSON turns,
 * one model call each), and the turns finishing inside a steady-state window are counted. Turns/s should grow
 * with the workers while the model's latency dominates.
 */
export async function measureTurnScaling(
  natsUrl: string,
  redisUrl: string,
  opts: TurnScalingOptions,
): Promise<TurnScalingRow[]> {
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const model = await AnthropicLoopback.start({ latencyMs: opts.modelLatencyMs });
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-bench-agents-'));
  const subjectPrefix = `bench-${randomUUID().slice(0, 8)}.`;
  const env: NodeJS.ProcessEnv = {
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'silent',
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: model.apiKey,
    REDIS_URL: redisUrl,
    ALFRED_REDIS_PREFIX: `bench-${randomUUID().slice(0, 8)}:`,
    ALFRED_MAX_CONCURRENT_TURNS: String(opts.perWorker),
    ALFRED_MEMORY_CONTEXT_LIMIT: '0',
    ALFRED_BUS_TIMEOUT_MS: '30000',
  };
  const alfred: RunningAlfred = await startOverNats({
    env,
    gateway: loadGatewayConfig(env),
    logger,
    port: 0,
    natsUrl,
    subjectPrefix,
    ephemeral: true,
  });
  const sys = { url: alfred.url, model };
  const workers: Array<{ stop(): Promise<void>; started: () => number }> = [];
  const startWorker = async (name: string) => {
    const bus = await NatsBus.connect({ url: natsUrl, name, subjectPrefix, logger });
    // Counts the turns this worker takes from the queue group (its turn-start handler's calls).
    let started = 0;
    const serve = bus.serve.bind(bus);
    bus.serve = ((route, handler, options) =>
      serve(
        route,
        route.subject === TurnRoutes.start.subject
          ? (p, ctx) => {
              started += 1;
              return handler(p, ctx);
            }
          : handler,
        options,
      )) as typeof bus.serve;
    const hosted = await hostService(agentRuntimeService, agentRuntimeService.loadConfig(env), {
      service: agentRuntimeService.name,
      instance: name,
      bus,
      logger,
    });
    const stop = async () => {
      await hosted.stop();
      await bus.close(2_000);
    };
    return { stop, started: () => started };
  };
  try {
    // Only the workers added here take turns.
    await alfred.services.find((s) => s.name === agentRuntimeService.name)!.stop();
    workers.push(await startWorker(`bench-worker-0-${randomUUID().slice(0, 4)}`));
    const sessions: string[] = [];
    for (let i = 0; i < opts.sessions; i++) {
      const res = await fetch(`${sys.url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      sessions.push(((await res.json()) as { id: string }).id);
    }
    const rows: TurnScalingRow[] = [];
    for (const count of opts.workers) {
      while (workers.length < count)
        workers.push(await startWorker(`bench-worker-${workers.length}-${randomUUID().slice(0, 4)}`));
      // More replies than the phase can use (an upper bound from the slots and the latency); the rest is cleared.
      const bound =
        Math.ceil(
          (((count * opts.perWorker * 1000) / opts.modelLatencyMs) * (opts.warmupMs + opts.windowMs + 5_000)) / 1000,
        ) + opts.sessions;
      for (let i = 0; i < bound; i++) sys.model.reply('Next is the quarterly report.');
      const before = workers.map((w) => w.started());
      const latencies: number[] = [];
      let errors = 0;
      let counted = 0;
      const t0 = performance.now();
      const from = t0 + opts.warmupMs;
      const until = from + opts.windowMs;
      await Promise.all(
        sessions.map(async (session) => {
          while (performance.now() < until) {
            const r = await turn(sys.url, session);
            const end = performance.now();
            if (end < from || end > until) continue;
            counted++;
            latencies.push(r.ms);
            if (!r.ok) errors++;
          }
        }),
      );
      sys.model.clear();
      latencies.sort((a, b) => a - b);
      const seconds = opts.windowMs / 1000;
      rows.push({
        workers: count,
        turns: counted,
        seconds,
        turnsPerSecond: Math.round((counted / seconds) * 10) / 10,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        errors,
        startedPerWorker: workers.map((w, i) => w.started() - (before[i] ?? 0)),
      });
    }
    return rows;
  } finally {
    for (const w of workers) await w.stop();
    await alfred.stop();
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The `npm run bench` section: turns/s for 1, 2 and 4 workers, and the 4-worker speed-up. */
export async function agentsBench(options: { logger: Logger; quick: boolean; natsUrl?: string }): Promise<BenchRow[]> {
  if (!options.natsUrl) return [];
  const latency = 500;
  const rows = await measureTurnScaling(options.natsUrl, process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    workers: [1, 2, 4],
    sessions: 64,
    warmupMs: 2_000,
    windowMs: options.quick ? 5_000 : 10_000,
    modelLatencyMs: latency,
    perWorker: 4,
  });
  const base = rows[0]!.turnsPerSecond;
  return rows.map((r) => ({
    section: SECTION,
    name: `agent turns, ${r.workers} worker${r.workers > 1 ? 's' : ''}`,
    mode: 'nats+redis',
    connections: 64,
    rps: r.turnsPerSecond,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    note:
      `turns/s; ${(r.turnsPerSecond / base).toFixed(2)}x one worker; model latency ${latency} ms, 4 ` +
      `turns per worker at once`,
  }));
}
