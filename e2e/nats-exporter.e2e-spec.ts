import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort, pollUntil, startOwnNats, type OwnServer } from '#testing';

const run = promisify(execFile);
const has = (tool: string) =>
  run(tool, ['--version']).then(
    () => true,
    () => false,
  );
const CI = process.env.CI === 'true';
const natsServer = await has('nats-server');
const promtool = await has('promtool');
if (!natsServer && CI) throw new Error('nats-server is required in CI (apt-get install nats-server)');
if (!natsServer) process.stderr.write('[skip] NATS exporter tests: no nats-server (apt-get install nats-server)\n');
if (!promtool && CI) throw new Error("promtool is required in CI (Debian's prometheus package)");

/** The value of one sample (`name{labels} value`) in an exposition, or undefined. */
const sample = (text: string, name: string, server: string) => {
  const line = new RegExp(`^${name}\\{server="${server.replaceAll('.', '\\.')}"[^}]*\\} (\\S+)$`, 'm');
  return Number(line.exec(text)?.[1] ?? NaN);
};

/**
 * docker/nats-exporter.mjs, the `metrics` profile's view of NATS: run as the compose service runs it, against a real
 * nats-server with monitoring on, and a second configured server that is down.
 */
(natsServer ? describe : describe.skip)('NATS exporter', () => {
  let dir: string;
  let nats: OwnServer;
  let exporter: ChildProcess;
  let metricsUrl: string;
  const down = '127.0.0.2:4222';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-nats-exporter-'));
    const monitorPort = await freePort();
    nats = await startOwnNats(join(dir, 'js'), { monitorPort });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    const script = new URL('../docker/nats-exporter.mjs', import.meta.url).pathname;
    exporter = spawn(process.execPath, [script], {
      env: {
        NATS_URL: `${nats.url},nats://${down}`,
        ALFRED_NATS_MONITOR_PORT: String(monitorPort),
        ALFRED_NATS_EXPORTER_PORT: String(port),
        ALFRED_NATS_EXPORTER_HOST: '127.0.0.1',
      },
      stdio: 'ignore',
    });
    const serving = async () => (await fetch(metricsUrl).catch(() => undefined))?.ok === true;
    await pollUntil(serving, 20_000, 'the exporter to serve');
  });
  afterAll(async () => {
    exporter?.kill();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("should report each server's traffic and JetStream state, and a server that is down as down", async () => {
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'EXPORTED', subjects: ['exported.>'] });
    for (let i = 0; i < 5; i++) await jetstream(nc).publish('exported.x', `m${i}`);
    await nc.close();
    const text = await (await fetch(metricsUrl)).text();
    const up = nats.url.replace('nats://', '');
    const health = [sample(text, 'nats_up', up), sample(text, 'nats_healthy', up), sample(text, 'nats_up', down)];
    expect(health).toEqual([1, 1, 0]);
    expect(sample(text, 'nats_jetstream_streams', up)).toBe(1);
    expect(sample(text, 'nats_jetstream_messages', up)).toBe(5);
    expect(sample(text, 'nats_received_messages_total', up)).toBeGreaterThanOrEqual(5);
    expect(sample(text, 'nats_connections_opened_total', up)).toBeGreaterThanOrEqual(1);
    const server = up.replaceAll('.', '\\.');
    const info = `^nats_server_info\\{server="${server}",server_name="[^"]+",version="\\d+\\.\\d+\\.\\d+"\\} 1$`;
    expect(text).toMatch(new RegExp(info, 'm'));
    // Nothing but `up` for the server that is down: no stale or zero figures.
    expect(text.split('\n').filter((l) => l.includes(down))).toEqual([`nats_up{server="${down}"} 0`]);
  });

  (promtool ? it : it.skip)('should pass promtool check metrics', async () => {
    const text = await (await fetch(metricsUrl)).text();
    const checked = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    checked.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    checked.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    checked.stdin!.end(text);
    const code = await new Promise<number | null>((resolve) => checked.once('close', resolve));
    expect(`${code} ${output.trim()}`).toBe('0 ');
  });
});
