import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { deleteStreamsWithPrefix, describeWithNats, pollUntil, testServers } from '#testing';
import { client } from './harness.js';
import { launch, launchCommand, repo, stop } from './process-harness.js';

const describeNats = await describeWithNats();

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every line a process printed is one JSON object with one `service` key. */
function expectJsonLines(output: string, service: string): Array<Record<string, unknown>> {
  const lines = output
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('>') && !/^npm (warn|notice)/.test(l));
  return lines.map((line) => {
    expect(`${line.match(/"service":/g)?.length ?? 0} ${line}`).toBe(`1 ${line}`);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed.service).toBe(service);
    return parsed;
  });
}

/** What an operator relies on when running the services by hand or in containers. */
describeNats('operating the distributed shape', () => {
  let dir: string;
  let prefix: string;
  let common: Record<string, string>;
  beforeAll(async () => {
    execFileSync(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-p', join(repo, 'tsconfig.build.json')],
      { stdio: 'inherit' },
    );
    dir = await mkdtemp(join(tmpdir(), 'alfred-ops-'));
  }, 120_000);
  beforeEach(() => {
    prefix = `ops-${randomUUID().slice(0, 8)}.`;
    common = { NATS_URL: testServers.natsUrl, ALFRED_SUBJECT_PREFIX: prefix, ALFRED_EMBEDDER: 'hash' };
  });
  afterEach(() => deleteStreamsWithPrefix(testServers.natsUrl, prefix));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('should refuse to start the distiller without REDIS_URL instead of using a file store of its own', async () => {
    await expect(
      launch('dist/services/distiller/src/main.js', { ...common, ALFRED_DATA_DIR: join(dir, 'distiller') }, /never/),
    ).rejects.toThrow(/exited with 1[\s\S]*REDIS_URL: required when distiller runs as its own process/);
  }, 30_000);

  it('should refuse a second memory instance on an embedded LanceDB folder the first one holds', async () => {
    const env = { ...common, ALFRED_DATA_DIR: join(dir, 'shared-memory') };
    const first = await launch('dist/services/memory/src/main.js', env, /service started/);
    try {
      await expect(launch('dist/services/memory/src/main.js', env, /service started/)).rejects.toThrow(
        /exited with 1[\s\S]*in use by another process/,
      );
      expect(first.child.exitCode).toBeNull();
    } finally {
      expect(await stop(first.child)).toBe(0);
    }
  }, 60_000);

  it('should serve /live, /ready and Prometheus /metrics on the health port, bound to the set host only', async () => {
    const port = await freePort();
    const memory = await launch(
      'dist/services/memory/src/main.js',
      { ...common, ALFRED_DATA_DIR: join(dir, 'metrics'), ALFRED_HEALTH_PORT: String(port) },
      /service started/,
    );
    try {
      await pollUntil(
        async () => (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status === 200,
        10_000,
        'ready',
      );
      expect(execFileSync('ss', ['-Hltn', `sport = :${port}`]).toString()).toMatch(
        new RegExp(`127\\.0\\.0\\.1:${port}\\b`),
      );
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await metrics.text();
      expect(text).toMatch(/^# TYPE alfred_bus_requests_total counter$/m);
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    } finally {
      expect(await stop(memory.child)).toBe(0);
    }
  }, 60_000);

  it('should log JSON lines with one service key, and a 503 from an outage at warn without a stack', async () => {
    const gateway = await launch(
      'dist/services/gateway/src/main.js',
      { ...common, ALFRED_API_PORT: '0', ALFRED_LOG_LEVEL: 'info' },
      /gateway listening on/,
    );
    const api = client(`http://127.0.0.1:${gateway.output().match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]}`);
    expect((await api.get('/memories')).status).toBe(503);
    expect((await api.get('/memories/not-a-uuid')).status).toBeGreaterThanOrEqual(400);
    await pollUntil(() => /no memory instance/.test(gateway.output()), 5_000, 'the 503 log line');
    expect(await stop(gateway.child)).toBe(0);
    const lines = expectJsonLines(gateway.output(), 'gateway');
    const outage = lines.find((l) => l.code === 'SERVICE_UNAVAILABLE')!;
    expect(outage).toMatchObject({ level: 'warn', status: 503, route: '/memories' });
    expect(JSON.stringify(outage)).not.toMatch(/stack|"err"/);
    for (const l of lines.filter((x) => typeof x.status === 'number' && (x.status as number) < 500))
      expect(l.level).toBe('info');
  }, 60_000);

  it('should stop the service, not orphan it, when npm run start:<service> gets SIGTERM', async () => {
    const npm = await launchCommand(
      'npm',
      ['run', '--silent', 'start:memory'],
      { ...common, HOME: process.env.HOME, ALFRED_DATA_DIR: join(dir, 'npm') },
      /service started/,
    );
    const service = Number(
      execFileSync('ps', ['--ppid', String(npm.child.pid), '-o', 'pid='])
        .toString()
        .trim(),
    );
    expect(service).toBeGreaterThan(0);
    await stop(npm.child);
    await pollUntil(() => !alive(service), 15_000, 'the service process to exit');
    expect(npm.output()).toMatch(/"msg":"service stopped"/);
  }, 60_000);
});
