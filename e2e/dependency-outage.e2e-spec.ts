import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil, SANDBOX_MODE, startOwnNats, startOwnRedis, type OwnServer } from '#testing';
import { client, type Client } from './harness.js';
import { launchSource, type SourceProcess } from './source-process.js';

/**
 * Longer than the ~20 s after which a NATS client with the library's reconnect defaults (10 attempts, 2 s apart) gives
 * up.
 */
const NATS_OUTAGE_MS = 25_000;

/**
 * Services outlive their brokers: a NATS server and a Redis server of the test's own (free loopback ports, own
 * stores — never the shared ones) are stopped under running services and started again. While one is away, requests
 * get a fast 503 with Retry-After and readiness says why; once it is back, writes work again without a restart.
 */
describe('services across broker outages (own NATS and Redis)', () => {
  let dir: string;
  let nats: OwnServer;
  let redis: OwnServer;
  const services: SourceProcess[] = [];
  let memory: SourceProcess;
  let agents: SourceProcess;
  let gateway: SourceProcess;
  let api: Client;
  let apiUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-outage-'));
    nats = await startOwnNats(join(dir, 'nats'));
    redis = await startOwnRedis(dir);
    const common = {
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'info',
      ALFRED_OS_SANDBOX: SANDBOX_MODE,
    };
    memory = launchSource('services/memory/src/main.ts', { ...common, ALFRED_DATA_DIR: join(dir, 'memory') });
    agents = launchSource('services/agent-runtime/src/main.ts', { ...common, ALFRED_DATA_DIR: join(dir, 'agents') });
    gateway = launchSource('services/gateway/src/main.ts', {
      ...common,
      ALFRED_DATA_DIR: join(dir, 'gateway'),
      ALFRED_API_PORT: '0',
    });
    services.push(memory, agents, gateway);
    await Promise.all([memory.waitFor(/service started/), agents.waitFor(/service started/)]);
    const [, port] = await gateway.waitFor(/gateway listening on http:\/\/127\.0\.0\.1:(\d+)/);
    apiUrl = `http://127.0.0.1:${port}`;
    api = client(apiUrl);
  }, 180_000);

  afterAll(async () => {
    for (const s of services) await s.stop();
    await nats?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  /** Sends writes one after another for `ms` (each a fast 503 while a broker is away); how many were refused. */
  const refuseFor = async (ms: number) => {
    let refused = 0;
    for (const until = Date.now() + ms; Date.now() < until; ) {
      if ((await api.post('/memories', { content: 'refused' })).status === 503) refused++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return refused;
  };

  const alive = () => services.every((s) => s.child.exitCode === null && s.child.signalCode === null);

  it('should answer 503 with Retry-After while Redis is down, report it, and serve again once it is back', async () => {
    const before = await api.post('/sessions', {});
    expect(before.status).toBe(201);
    await redis.stop('SIGTERM');
    await agents.waitFor(/Redis disconnected; reconnecting/, 30_000);

    const during = await api.post('/sessions', {});
    expect(during.status).toBe(503);
    expect(during.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dependency: 'Redis' } });
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    const health = await api.get('/health');
    expect(health.body.services['agent-runtime']).toBe('not-ready');

    await redis.start();
    await pollUntil(
      async () => (await api.post('/sessions', {})).status === 201,
      30_000,
      'a session created after Redis returned',
    );
    expect((await api.get(`/sessions/${before.body.id}`)).status).toBe(200);
    expect(agents.output()).toMatch(/Redis reconnected/);
    expect(alive()).toBe(true);
  }, 120_000);

  it('should keep every service up through a NATS outage past the old give-up window, and write after it', async () => {
    const before = await api.post('/memories', { content: 'written before the broker went away' });
    expect(before.status).toBe(201);
    await nats.stop('SIGTERM');
    await gateway.waitFor(/NATS disconnected; reconnecting/, 30_000);

    const during = await api.post('/memories', { content: 'written while the broker is away' });
    expect(during.status).toBe(503);
    expect(during.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dependency: 'NATS' } });
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    const health = await api.get('/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unhealthy', dependencies: { nats: 'reconnecting' } });

    // Hundreds of refused requests during the outage: the logs say so in a few lines, the metrics count every one.
    const lines = () => services.map((s) => s.output().split('\n').length);
    const linesBefore = lines();
    const refusedCount = /alfred_http_requests_total\{method="POST",route="\/memories",status="503"\} (\d+)/;
    const counted = async () => Number(refusedCount.exec(await (await fetch(`${apiUrl}/metrics`)).text())?.[1] ?? 0);
    const countedBefore = await counted();
    const refused = await refuseFor(NATS_OUTAGE_MS);
    const logged = lines().map((n, i) => n - linesBefore[i]!);
    process.stdout.write(`NATS outage: ${refused} requests refused; log lines (memory/agents/gateway): ${logged}\n`);
    expect(refused).toBeGreaterThan(200);
    for (const n of logged) expect(n).toBeLessThan(10);
    expect(gateway.output()).toMatch(/"repeated":"SERVICE_UNAVAILABLE NATS","state":"started"/);
    expect((await counted()) - countedBefore).toBeGreaterThanOrEqual(refused);
    expect(alive()).toBe(true);
    expect((await api.post('/memories', { content: 'still away' })).status).toBe(503);

    await nats.start();
    await pollUntil(
      async () => (await api.post('/memories', { content: 'written after the broker returned' })).status === 201,
      60_000,
      'a memory written after NATS returned',
    );
    expect((await api.get(`/memories/${before.body.id}`)).body.content).toBe('written before the broker went away');
    await pollUntil(
      async () => (await api.get('/health')).body.dependencies?.nats === 'connected',
      30_000,
      'the gateway reporting NATS connected',
    );
    // Each process reconnects on its own backoff: the agent worker, idle, may come back after the gateway did.
    for (const s of [memory, agents, gateway])
      await pollUntil(async () => /NATS reconnected/.test(s.output()), 30_000, 'every service logging its reconnect');
    expect(alive()).toBe(true);
  }, 180_000);
});
