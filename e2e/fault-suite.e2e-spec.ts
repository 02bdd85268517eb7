import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_MODE, startOwnNats, startOwnRedis, type OwnServer } from '#testing';
import { acknowledged, memoriesByContent, newTally, runLoad, secondsToHealthy, verify, type FaultReport, type Tally } from './fault-load.js';
import { launchSource, type SourceProcess } from './source-process.js';

/** Each case: WRITERS clients making PER_WRITER writes each, the fault landing after FAULT_AFTER acknowledgements. */
const WRITERS = 3;
const PER_WRITER = 120;
const FAULT_AFTER = 60;
const OUTAGE_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The fault suite: real processes (memory, agent-runtime, gateway) on a NATS and a Redis server of the suite's own
 * (free loopback ports, own stores; never the shared ones), a bounded write load with an Idempotency-Key per write,
 * and one fault per case. Every case reports acknowledged writes, lost and duplicated ones, client errors by status,
 * hangs and seconds to healthy, and asserts the zeros. Figures: stdout, and ALFRED_FAULT_REPORT (a JSON file) when set.
 */
describe('fault suite (own NATS and Redis, real processes, bounded write load)', () => {
  let dir: string;
  let nats: OwnServer;
  let redis: OwnServer;
  let memory: SourceProcess;
  let agents: SourceProcess;
  let gateway: SourceProcess;
  let base: string;
  let common: Record<string, string>;
  const reports: FaultReport[] = [];

  const launchMemory = () => launchSource('services/memory/src/main.ts', { ...common, ALFRED_DATA_DIR: join(dir, 'memory') });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-faults-'));
    nats = await startOwnNats(join(dir, 'nats'));
    redis = await startOwnRedis(dir);
    common = { NATS_URL: nats.url, REDIS_URL: redis.url, ALFRED_EMBEDDER: 'hash', ALFRED_LOG_LEVEL: 'warn', ALFRED_OS_SANDBOX: SANDBOX_MODE };
    memory = launchMemory();
    agents = launchSource('services/agent-runtime/src/main.ts', { ...common, ALFRED_LOG_LEVEL: 'info', ALFRED_DATA_DIR: join(dir, 'agents') });
    gateway = launchSource('services/gateway/src/main.ts', { ...common, ALFRED_LOG_LEVEL: 'info', ALFRED_DATA_DIR: join(dir, 'gateway'), ALFRED_API_PORT: '0' });
    await agents.waitFor(/service started/);
    const [, port] = await gateway.waitFor(/gateway listening on http:\/\/127\.0\.0\.1:(\d+)/);
    base = `http://127.0.0.1:${port}`;
    // Warn level hides "service started": the memory service is up once a write is acknowledged.
    const probe = newTally();
    await runLoad(base, '/memories', 'warm-up', 1, 1, (content) => ({ content }), probe);
  }, 180_000);

  afterAll(async () => {
    process.stdout.write(`fault suite figures:\n${JSON.stringify(reports, null, 2)}\n`);
    if (process.env.ALFRED_FAULT_REPORT) await writeFile(process.env.ALFRED_FAULT_REPORT, JSON.stringify(reports, null, 2));
    for (const p of [gateway, agents, memory]) await p?.stop();
    await nats?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  /** Runs the memory write load with `fault` landing under it; `fault` resolves with the time it was repaired. */
  async function memoryCase(name: string, fault: () => Promise<number>): Promise<FaultReport> {
    const tally = newTally();
    const label = name.replace(/\W+/g, '-');
    const load = runLoad(base, '/memories', label, WRITERS, PER_WRITER, (content) => ({ content }), tally);
    await acknowledged(tally, FAULT_AFTER);
    const repairedAt = await fault();
    await load;
    const { lost, duplicates } = verify(tally, await memoriesByContent(base), label);
    return record(name, tally, lost, duplicates, repairedAt);
  }

  function record(fault: string, tally: Tally, lost: number, duplicates: number, repairedAt: number): FaultReport {
    const report: FaultReport = {
      fault,
      requests: tally.requests,
      acknowledged: tally.acked.size,
      lost,
      duplicates,
      gaveUp: tally.gaveUp,
      errorsByStatus: tally.errors,
      hangs: tally.hangs,
      secondsToHealthy: secondsToHealthy(tally, repairedAt),
    };
    reports.push(report);
    return report;
  }

  const expectZeros = (r: FaultReport) => {
    expect({ lost: r.lost, duplicates: r.duplicates, hangs: r.hangs, gaveUp: r.gaveUp }).toEqual({ lost: 0, duplicates: 0, hangs: 0, gaveUp: 0 });
    expect(r.acknowledged).toBe(WRITERS * PER_WRITER);
    expect(Number.isFinite(r.secondsToHealthy)).toBe(true);
    // Only outage answers, each in the API's shape: 503 (fast, with Retry-After), 504 for a request in flight when
    // the fault hit, 409 for a retry that found its first attempt still running. Never a 500 or a dropped connection.
    expect(Object.keys(r.errorsByStatus).filter((s) => !['503', '504', '409'].includes(s))).toEqual([]);
  };

  it('kill -9 of the memory service (one instance), restarted', async () => {
    const r = await memoryCase('memory kill -9', async () => {
      await memory.kill();
      memory = launchMemory();
      return Date.now();
    });
    expectZeros(r);
  }, 180_000);

  it('NATS stopped for 5 s (SIGTERM), restarted on its store', async () => {
    const r = await memoryCase('NATS SIGTERM 5 s', async () => {
      await nats.stop('SIGTERM');
      await sleep(OUTAGE_MS);
      await nats.start();
      return Date.now();
    });
    expectZeros(r);
  }, 180_000);

  it('NATS killed (kill -9) for 5 s, restarted on its store', async () => {
    const r = await memoryCase('NATS kill -9 5 s', async () => {
      await nats.stop('SIGKILL');
      await sleep(OUTAGE_MS);
      await nats.start();
      return Date.now();
    });
    expectZeros(r);
  }, 180_000);

  it('Redis killed (kill -9) and restarted with its AOF, under session creation', async () => {
    const tally = newTally();
    const load = runLoad(base, '/sessions', 'sessions', WRITERS, PER_WRITER / 2, (content) => ({ metadata: { label: content } }), tally);
    await acknowledged(tally, FAULT_AFTER / 2);
    await redis.stop('SIGKILL');
    await sleep(3_000);
    await redis.start();
    const repairedAt = Date.now();
    await load;
    let lost = 0;
    for (const id of tally.acked.values()) if ((await fetch(`${base}/sessions/${id}`)).status !== 200) lost++;
    const listed = (await (await fetch(`${base}/sessions?limit=1`)).json()) as { total: number };
    const r = record('Redis kill -9, AOF restart', tally, lost, listed.total - tally.acked.size, repairedAt);
    expect({ lost: r.lost, duplicates: r.duplicates, hangs: r.hangs, gaveUp: r.gaveUp }).toEqual({ lost: 0, duplicates: 0, hangs: 0, gaveUp: 0 });
    expect(r.acknowledged).toBe(WRITERS * (PER_WRITER / 2));
  }, 180_000);
});
