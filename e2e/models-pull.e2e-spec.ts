/** @jest-environment ./libs/embeddings/src/testing/onnx-jest-environment.cjs */
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { writeTinyOnnxModel } from '../libs/embeddings/src/testing/tiny-onnx-model.js';
import { DEFAULT_MODEL } from '#embeddings';
import { createLogger } from '#logging';
import { startEmbedded } from '../services/composite.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { runModelsCommand } from '../services/memory/src/models.command.js';
import { client } from './harness.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });

/** A loopback stand-in for the model hub: Hugging Face's `/<repo>/resolve/<revision>/<file>` layout. */
async function hub(
  modelDir: string,
  missing: readonly string[] = [],
): Promise<{ url: string; server: Server; hits: string[] }> {
  const hits: string[] = [];
  const prefix = `/${DEFAULT_MODEL.repo}/resolve/main/`;
  const server = createServer(async (req, res) => {
    hits.push(req.url ?? '');
    const file = req.url?.startsWith(prefix) ? normalize(req.url.slice(prefix.length)) : undefined;
    if (!file || file.startsWith('..') || missing.includes(file)) return void res.writeHead(404).end('not found');
    try {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(await readFile(join(modelDir, file)));
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, hits };
}

describe('alfred models pull', () => {
  let dir: string;
  let modelDir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-pull-'));
    modelDir = await writeTinyOnnxModel(join(dir, 'hub-files'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('should leave nothing behind when a file is missing on the hub', async () => {
    const h = await hub(modelDir, ['onnx/model.onnx']);
    const dataDir = join(dir, 'data-missing');
    const lines: string[] = [];
    try {
      const code = await runModelsCommand(
        ['pull'],
        { out: (l) => lines.push(l), err: (l) => lines.push(l) },
        { ALFRED_DATA_DIR: dataDir, ALFRED_MODEL_HUB_URL: h.url },
      );
      expect(code).toBe(1);
      expect(lines.join('\n')).toMatch(/404 for onnx\/model\.onnx/);
      expect(existsSync(join(dataDir, 'models', DEFAULT_MODEL.folder))).toBe(false);
    } finally {
      h.server.close();
    }
  });

  it('should fetch the model so that `auto` switches from lexical to semantic search', async () => {
    const h = await hub(modelDir);
    const dataDir = join(dir, 'data');
    const env = { ALFRED_DATA_DIR: dataDir, ALFRED_MODEL_HUB_URL: h.url, ALFRED_LOG_LEVEL: 'silent' };
    try {
      const lines: string[] = [];
      expect(await runModelsCommand(['pull'], { out: (l) => lines.push(l), err: (l) => lines.push(l) }, env)).toBe(0);
      expect(lines.join('\n')).toMatch(/ready: .*all-MiniLM-L6-v2 \(8 dims/);
      expect(h.hits).toHaveLength(DEFAULT_MODEL.files.length);
    } finally {
      h.server.close();
    }
    const alfred = await startEmbedded({ env, gateway: loadGatewayConfig(env), logger, port: 0 });
    try {
      const api = client(alfred.url);
      await api.post('/memories', { content: 'the cat sat on the mat' });
      await api.post('/memories', { content: 'the stock market fell' });
      // No word in common with the stored text: only the model's embedding relates kitten to cat.
      const res = await api.get('/search?q=kitten');
      expect(res.body.results[0].content).toBe('the cat sat on the mat');
    } finally {
      await alfred.stop();
    }
  });
});
