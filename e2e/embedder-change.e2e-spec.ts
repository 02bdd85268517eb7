/** @jest-environment ./libs/embeddings/src/testing/onnx-jest-environment.cjs */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyOnnxModel } from '../libs/embeddings/src/testing/tiny-onnx-model.js';
import { createLogger } from '#logging';
import { startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { runReindexCommand } from '../services/memory/src/reindex.command.js';
import { client } from './harness.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });

/** Data embedded by one embedder is refused by another until `alfred reindex` re-embeds it. */
describe('changing the embedder', () => {
  let dir: string;
  let modelDir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-embedder-'));
    modelDir = await writeTinyOnnxModel(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const envFor = (embedder: Record<string, string>) => ({
    ALFRED_DATA_DIR: join(dir, 'data'),
    ALFRED_LOG_LEVEL: 'silent',
    ...embedder,
  });
  const start = (env: NodeJS.ProcessEnv) => startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
  const hash = { ALFRED_EMBEDDER: 'hash' };
  const onnx = () => ({ ALFRED_EMBEDDER: 'onnx', ALFRED_EMBEDDINGS_MODEL_DIR: modelDir });

  it('should refuse mismatched data, reindex it, then serve it with the new embedder', async () => {
    const first = await start(envFor(hash));
    const api = client(first.url);
    expect((await api.post('/memories', { content: 'the cat sat on the mat' })).status).toBe(201);
    expect((await api.post('/memories', { content: 'the stock market fell' })).status).toBe(201);
    await first.stop();

    await expect(start(envFor(onnx()))).rejects.toMatchObject({
      code: 'EMBEDDER_MISMATCH',
      message: expect.stringMatching(/hash-v2-384.*onnx:tiny-embedder.*alfred reindex/s),
    });

    const out: string[] = [];
    const code = await runReindexCommand([], { out: (l) => out.push(l), err: (l) => out.push(l) }, envFor(onnx()));
    expect(code).toBe(0);
    expect(out.join('\n')).toMatch(/reindexed 2 memories with onnx:tiny-embedder/);

    const second = await start(envFor(onnx()));
    try {
      const res = await client(second.url).get('/search?q=kitten%20on%20a%20mat');
      expect(res.status).toBe(200);
      expect(res.body.results[0].content).toBe('the cat sat on the mat');
      expect((await client(second.url).get('/memories')).body.pagination.total).toBe(2);
    } finally {
      await second.stop();
    }
    // Three starts of the whole system and a reindex: a minute leaves room for a loaded machine.
  }, 60_000);
});
