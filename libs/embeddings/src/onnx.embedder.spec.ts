/** @jest-environment ./libs/embeddings/src/testing/onnx-jest-environment.cjs */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { cosine } from './hashing.embedder.js';
import { OnnxEmbedder } from './onnx.embedder.js';
import { TINY_MODEL_DIMENSION, writeTinyOnnxModel } from './testing/tiny-onnx-model.js';

describe(OnnxEmbedder.name, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-onnx-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  describe('init', () => {
    it('should load a local model folder offline and read its dimension', async () => {
      const embedder = await new OnnxEmbedder({ modelDir: await writeTinyOnnxModel(dir, 'tiny-a') }).init();
      expect([embedder.id, embedder.kind, embedder.dimension]).toEqual([
        'onnx:tiny-a',
        'semantic',
        TINY_MODEL_DIMENSION,
      ]);
    });

    it('should fail clearly, without downloading, when the folder has no model', async () => {
      const err = await new OnnxEmbedder({ modelDir: join(dir, 'missing-model') }).init().catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: ErrorCode.ModelNotConfigured,
        message: expect.stringContaining('missing-model'),
      });
    });
  });

  describe('embed', () => {
    it('should give unit vectors where related texts score above unrelated ones', async () => {
      const embedder = new OnnxEmbedder({ modelDir: await writeTinyOnnxModel(dir, 'tiny-b'), batchSize: 2 });
      const [q, near, far] = await embedder.embed([
        'the cat sat on the mat',
        'a kitten sat on a mat',
        'stock market price fell',
      ]);
      expect(q).toHaveLength(TINY_MODEL_DIMENSION);
      expect(Math.hypot(...q!)).toBeCloseTo(1, 4);
      expect(cosine(q!, near!)).toBeGreaterThan(cosine(q!, far!) + 0.2);
    });

    it('should embed the same text the same way alone and in a padded batch', async () => {
      const embedder = await new OnnxEmbedder({ modelDir: await writeTinyOnnxModel(dir, 'tiny-c') }).init();
      const [alone] = await embedder.embed(['cat']);
      const [batched] = await embedder.embed(['cat', 'the stock market price rose on the mat']);
      expect(Array.from(batched!)).toEqual(Array.from(alone!).map((x) => expect.closeTo(x, 5)));
    });
  });
});
