import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '#logging';
import { generatedText, prng } from '#vector-store';
import { startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createAgent } from './load.js';

const logger = createLogger({ service: 'bench', level: 'silent' });
const dataDir = await mkdtemp(join(tmpdir(), 'alfred-scratch-'));
const env = {
  ALFRED_DATA_DIR: dataDir,
  ALFRED_EMBEDDER: 'hash',
  ALFRED_LOG_LEVEL: 'silent',
  ALFRED_BUS_TIMEOUT_MS: '30000',
};
const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
await createAgent(alfred.url, 'bench');
const AGENTS = Number(process.env.AGENTS ?? 1);
const SIZE = Number(process.env.SIZE ?? 500);
for (let a = 0; a < AGENTS; a++) await createAgent(alfred.url, `agent-${a}`);
const random = prng(3);
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.start');
const cpu0 = process.cpuUsage();
const t = performance.now();
const N = Number(process.env.N ?? 40);
let next = 0;
await Promise.all(
  [0, 1, 2, 3].map(async () => {
    while (next < N) {
      const agent = AGENTS > 1 ? `agent-${next % AGENTS}` : 'bench';
      next++;
      const res = await fetch(`${alfred.url}/memories/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-alfred-agent': agent },
        body: JSON.stringify({ memories: Array.from({ length: SIZE }, () => ({ content: generatedText(random) })) }),
      });
      if (!res.ok) throw new Error(await res.text());
      await res.arrayBuffer();
    }
  }),
);
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/prof2/batch.cpuprofile', JSON.stringify(profile));
const cpu = process.cpuUsage(cpu0);
console.log('cpu ms per 1000 memories', Math.round(((cpu.user + cpu.system) / 1000 / (N * SIZE)) * 1000));
console.log('memories/s', Math.round((N * SIZE) / ((performance.now() - t) / 1000)));
await alfred.stop();
process.exit(0);
