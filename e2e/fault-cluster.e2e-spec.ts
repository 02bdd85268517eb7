import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, StorageType, type StreamInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsBus, openKvBucket } from '#bus';
import { SANDBOX_MODE, startOwnNatsCluster, startOwnRedis, type OwnNatsCluster, type OwnServer } from '#testing';
import {
  acknowledged,
  faultReport,
  memoriesByContent,
  newTally,
  runLoad,
  verify,
  type FaultReport,
} from './fault-load.js';
import { launchSource, type SourceProcess } from './source-process.js';

/** WRITERS clients making PER_WRITER writes each; the node dies after FAULT_AFTER acknowledgements. */
const WRITERS = 3;
const PER_WRITER = 100;
const FAULT_AFTER = 50;
const REPLICAS = 3;
/** How long the load may take once a node is gone (it takes ~20 s when the cluster holds). */
const LOAD_DEADLINE_MS = 90_000;

/** How long after losing a node the cluster may take to move the leaders it held (stream, KV buckets, consumers). */
const LEADERS_MOVED_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest time without an acknowledgement from `from` on, in seconds. */
function longestStall(ackTimes: readonly number[], from: number): number {
  const times = [from, ...ackTimes.filter((t) => t >= from).sort((a, b) => a - b)];
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
  return Math.round(longest / 100) / 10;
}

interface ClusterReport extends FaultReport {
  readonly killedNode: string;
  readonly secondsOnTwoNodes: number;
  /** The longest wait between two acknowledgements after the kill: how long the cluster took to move the leaders. */
  readonly longestStallSeconds: number;
  readonly streamLeaderAfter: string | undefined;
  readonly writesWithErrors: number;
  /** From the kill to the last error a writer saw: errors come only while the cluster moves its leaders. */
  readonly secondsFromKillToLastError: number;
  readonly reconnectedServices: string[];
}

/**
 * Past one broker: a three-node JetStream cluster of the suite's own (nats-server processes clustered over routes on
 * free loopback ports, each with its own store), services given every node in NATS_URL and ALFRED_STREAM_REPLICAS=3,
 * and under a bounded load of idempotent writes the node leading the memory events stream is killed (kill -9); the
 * rest of the load runs on the two nodes left, then the node is started again on its store and catches up. Asserted:
 * every stream and KV bucket the services made has three copies; 0 lost acknowledged writes, 0 duplicates, 0 hangs;
 * client errors only on the writes in flight when the node died (at most one per writer) and only in the outage shapes
 * (503/504/409); every service process lives on and is healthy, having seen no more than a reconnect. Figures: stdout,
 * and appended to ALFRED_FAULT_REPORT (a JSON array) when set.
 */
describe('fault suite on a three-node NATS cluster (own servers, real processes, bounded write load)', () => {
  let dir: string;
  let cluster: OwnNatsCluster;
  let redis: OwnServer;
  let services: Record<'memory' | 'agents' | 'gateway', SourceProcess>;
  let nc: NatsConnection;
  let base: string;
  const reports: ClusterReport[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-ha-'));
    cluster = await startOwnNatsCluster(join(dir, 'nats'), 3);
    redis = await startOwnRedis(dir);
    const common = {
      NATS_URL: cluster.url,
      ALFRED_STREAM_REPLICAS: String(REPLICAS),
      REDIS_URL: redis.url,
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'warn',
      ALFRED_OS_SANDBOX: SANDBOX_MODE,
    };
    services = {
      memory: launchSource('services/memory/src/main.ts', { ...common, ALFRED_DATA_DIR: join(dir, 'memory') }),
      agents: launchSource('services/agent-runtime/src/main.ts', {
        ...common,
        ALFRED_LOG_LEVEL: 'info',
        ALFRED_DATA_DIR: join(dir, 'agents'),
      }),
      gateway: launchSource('services/gateway/src/main.ts', {
        ...common,
        ALFRED_LOG_LEVEL: 'info',
        ALFRED_DATA_DIR: join(dir, 'gateway'),
        ALFRED_API_PORT: '0',
      }),
    };
    await services.agents.waitFor(/service started/);
    const [, port] = await services.gateway.waitFor(/gateway listening on http:\/\/127\.0\.0\.1:(\d+)/);
    base = `http://127.0.0.1:${port}`;
    // Warn level hides the memory service's "service started": it is up once a write is acknowledged.
    await runLoad(base, '/memories', 'warm-up', 1, 1, (content) => ({ content }), newTally());
    nc = await connect({ servers: cluster.url.split(','), name: 'fault-cluster-observer' });
  }, 180_000);

  afterAll(async () => {
    process.stdout.write(`fault suite (NATS cluster) figures:\n${JSON.stringify(reports, null, 2)}\n`);
    const file = process.env.ALFRED_FAULT_REPORT;
    if (file && reports.length > 0) {
      // The single-broker suite writes this file too: add to what is there instead of replacing it.
      const earlier = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as unknown[]) : [];
      await writeFile(file, JSON.stringify([...earlier, ...reports], null, 2));
    }
    await nc?.close().catch(() => undefined);
    for (const p of Object.values(services ?? {})) {
      // SIGTERM first (a clean drain); anything still running when the suite gives up is killed.
      await Promise.race([p.stop(), sleep(15_000)]);
      await p.kill();
    }
    await cluster?.stop('SIGKILL');
    await redis?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }, 90_000);

  async function streams(): Promise<StreamInfo[]> {
    const jsm = await jetstreamManager(nc);
    const found: StreamInfo[] = [];
    for await (const info of jsm.streams.list()) found.push(info);
    return found;
  }

  /** The stream memory writes publish to (its events). */
  async function memoryStream(): Promise<StreamInfo> {
    const all = await streams();
    const memory = all.find((s) => /MEMOR/i.test(s.config.name) && !s.config.name.startsWith('KV_'));
    if (!memory) throw new Error(`no memory stream among ${all.map((s) => s.config.name).join(', ')}`);
    return memory;
  }

  /** Resolves once every stream has a leader and all its replicas are current (the restarted node caught up). */
  async function settled(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const all = await streams().catch(() => []);
      const ok =
        all.length > 0 &&
        all.every((s) => {
          const replicas = s.cluster?.replicas ?? [];
          return (
            s.cluster?.leader &&
            replicas.length === (s.config.num_replicas ?? 1) - 1 &&
            replicas.every((r) => r.current)
          );
        });
      if (ok) return;
      if (Date.now() > deadline)
        throw new Error(`the cluster did not settle: ${JSON.stringify(all.map((s) => [s.config.name, s.cluster]))}`);
      await sleep(250);
    }
  }

  it('gives every stream and KV bucket the services created three copies', async () => {
    // Feedback makes the shared counters bucket exist (created on first use).
    const [id] = [...(await memoriesByContent(base)).values()][0]!;
    const rated = await fetch(`${base}/memories/${id}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ helpful: true }),
    });
    expect(rated.status).toBe(200);
    await settled();
    const all = await streams();
    expect(all.map((s) => s.config.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^KV_/), expect.stringMatching(/^KV_.*COUNTERS/)]),
    );
    for (const s of all)
      expect({ stream: s.config.name, replicas: s.config.num_replicas }).toEqual({
        stream: s.config.name,
        replicas: REPLICAS,
      });
  }, 90_000);

  it('raises a stream and a KV bucket made with one copy to three when a service set for three uses them', async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'HA_RAISE', subjects: ['ha-raise.>'], storage: StorageType.File, num_replicas: 1 });
    const oneCopy = await new Kvm(nc).create('HA_RAISE_KV', { history: 1, replicas: 1 });
    await oneCopy.put('kept', 'before the raise');
    const bus = await NatsBus.connect({ url: cluster.url, name: 'fault-cluster-raise', replicas: REPLICAS });
    try {
      await bus.streams.ensure({ name: 'HA_RAISE', subjects: ['ha-raise.>'] });
      expect((await jsm.streams.info('HA_RAISE')).config.num_replicas).toBe(REPLICAS);
      // The Idempotency-Key and counters buckets open through this: an old bucket gets the copies, keeping its entries.
      const raised = await openKvBucket(nc, 'HA_RAISE_KV', { history: 1, replicas: REPLICAS });
      expect((await jsm.streams.info('KV_HA_RAISE_KV')).config.num_replicas).toBe(REPLICAS);
      expect((await raised.get('kept'))?.string()).toBe('before the raise');
    } finally {
      // The stream stays (the cluster is the suite's own): deleting it while its new copies are made times out.
      await bus.close();
    }
  }, 60_000);

  it('kill -9 of the memory stream leader under load: nothing lost or doubled, errors in flight, rejoins', async () => {
    await settled();
    const leader = (await memoryStream()).cluster!.leader!;
    const victim = cluster.names.indexOf(leader);
    expect(victim).toBeGreaterThanOrEqual(0);
    const before = Object.fromEntries(Object.entries(services).map(([name, p]) => [name, p.output().length]));

    const tally = newTally();
    const label = 'cluster-kill-leader';
    const load = runLoad(base, '/memories', label, WRITERS, PER_WRITER, (content) => ({ content }), tally);
    await acknowledged(tally, FAULT_AFTER);
    const killedAt = Date.now();
    await cluster.nodes[victim]!.stop('SIGKILL');
    // The rest of the load runs on the two nodes left: with three copies nothing waits for the dead one. (With one
    // copy on the dead node the writes wait for it: this fails here, with the figures, not at jest's timeout.)
    const finished = await Promise.race([load.then(() => true), sleep(LOAD_DEADLINE_MS).then(() => false)]);
    if (!finished) {
      await cluster.nodes[victim]!.start();
      throw new Error(
        `the load did not finish on two nodes within ${LOAD_DEADLINE_MS / 1000} s: ` +
          `${JSON.stringify({ acked: tally.acked.size, errors: tally.errors, hangs: tally.hangs })}`,
      );
    }
    const loadEndedAt = Date.now();
    await cluster.nodes[victim]!.start();
    // Back on its store, it catches up with what was written without it.
    await settled();

    const { lost, duplicates } = verify(tally, await memoriesByContent(base), label);
    const newLines = (name: keyof typeof services) => services[name].output().slice(before[name]);
    const report: ClusterReport = {
      // With two of three nodes left the cluster never stops serving: healthy counts from the kill, not the restart.
      ...faultReport(
        `NATS cluster: kill -9 of the memory stream's leader (${leader}), down for the rest of the load, ` +
          `then restarted`,
        tally,
        { lost, duplicates },
        killedAt,
      ),
      killedNode: leader,
      secondsOnTwoNodes: Math.round((loadEndedAt - killedAt) / 100) / 10,
      longestStallSeconds: longestStall(tally.ackTimes, killedAt),
      streamLeaderAfter: (await memoryStream()).cluster?.leader,
      writesWithErrors: tally.writesWithErrors,
      secondsFromKillToLastError: Math.round((Math.max(killedAt, ...tally.errorTimes) - killedAt) / 100) / 10,
      reconnectedServices: Object.keys(services).filter((name) =>
        /NATS reconnected/.test(newLines(name as keyof typeof services)),
      ),
    };
    reports.push(report);

    expect({ lost, duplicates, hangs: tally.hangs, gaveUp: tally.gaveUp }).toEqual({
      lost: 0,
      duplicates: 0,
      hangs: 0,
      gaveUp: 0,
    });
    expect(tally.acked.size).toBe(WRITERS * PER_WRITER);
    // Errors only while the cluster moves its leaders: a write made then may fail (503/504, retried with its key),
    // none once the leaders have moved — however many writes each writer made in that window.
    expect(report.secondsFromKillToLastError * 1000).toBeLessThanOrEqual(LEADERS_MOVED_MS);
    expect(Object.keys(tally.errors).filter((s) => !['503', '504', '409'].includes(s))).toEqual([]);
    // The services noticed no more than a reconnect: all still running, none logged a fatal or a closed connection.
    for (const [name, p] of Object.entries(services)) {
      expect({ name, exitCode: p.child.exitCode, signal: p.child.signalCode }).toEqual({
        name,
        exitCode: null,
        signal: null,
      });
      expect({
        name,
        fatal: /"level":"?(fatal|60)|closed for good/.test(newLines(name as keyof typeof services)),
      }).toEqual({ name, fatal: false });
    }
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
  }, 170_000);
});
