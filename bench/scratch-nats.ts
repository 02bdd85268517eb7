import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { createLogger } from '#logging';
import { startOverNats, startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createAgent, load } from './load.js';

const logger = createLogger({ service: 'bench', level: 'silent' });
const dataDir = await mkdtemp(join(tmpdir(), 'alfred-scratch-'));
const env = {
  ALFRED_DATA_DIR: dataDir,
  ALFRED_EMBEDDER: 'hash',
  ALFRED_LOG_LEVEL: 'silent',
  ALFRED_BUS_TIMEOUT_MS: '30000',
};
const mode = process.env.MODE ?? 'nats';
const alfred =
  mode === 'nats'
    ? await startOverNats({
        env,
        gateway: loadGatewayConfig(env),
        logger,
        port: 0,
        natsUrl: 'nats://127.0.0.1:4222',
        subjectPrefix: `bench-${randomUUID().slice(0, 8)}.`,
        ephemeral: true,
      })
    : await startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
await createAgent(alfred.url, 'bench');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.start');
const cpu0 = process.cpuUsage();
const r = await load('w', 'POST', mode, {
  url: `${alfred.url}/memories`,
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-alfred-agent': 'bench' },
  body: JSON.stringify({ content: 'The user likes espresso in the morning', importance: 0.6, tags: ['coffee'] }),
  connections: 16,
  duration: 8,
});
const cpu = process.cpuUsage(cpu0);
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/prof2/n.cpuprofile', JSON.stringify(profile));
console.log(
  r.rps,
  'rps p50',
  r.p50,
  'p99',
  r.p99,
  'cpu ms/write',
  ((cpu.user + cpu.system) / 1000 / (r.rps * 8)).toFixed(3),
);
await alfred.stop();
process.exit(0);
