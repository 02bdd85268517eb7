/** @jest-environment ./libs/embeddings/src/testing/onnx-jest-environment.cjs */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CachedEmbedder } from './cached.embedder.js';
import { createEmbedder, LEXICAL_FALLBACK_NOTICE } from './embedder.factory.js';
import type { Embedder } from './embedder.js';
import { HashingEmbedder } from './hashing.embedder.js';
import { writeTinyOnnxModel } from './testing/tiny-onnx-model.js';

describe(createEmbedder.name, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-embedder-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('should fall back to hashing with a notice naming the fixes when no model exists', async () => {
    const { embedder, notice } = await createEmbedder({ kind: 'auto', modelDir: join(dir, 'none') });
    expect([embedder.id, embedder.kind]).toEqual(['hash-v2-384', 'lexical']);
    expect(notice).toBe(LEXICAL_FALLBACK_NOTICE);
    expect(notice).toMatch(
      /lexical.*word overlap.*no semantic similarity.*npx alfred models pull.*ALFRED_EMBEDDINGS_URL/s,
    );
  });

  it('should pick the local model folder when it exists, without a notice', async () => {
    const modelDir = await writeTinyOnnxModel(dir, 'tiny-auto');
    const { embedder, notice } = await createEmbedder({ kind: 'auto', modelDir });
    expect([embedder.id, embedder.kind, embedder.dimension, notice]).toEqual([
      'onnx:tiny-auto',
      'semantic',
      8,
      undefined,
    ]);
  });

  it('should honour an explicit hash kind and dimension', async () => {
    const { embedder, notice } = await createEmbedder({ kind: 'hash', dimension: 64, modelDir: dir });
    expect([embedder.id, notice]).toEqual(['hash-v2-64', undefined]);
  });

  it('should refuse onnx and openai kinds without their settings', async () => {
    await expect(createEmbedder({ kind: 'onnx' })).rejects.toMatchObject({ code: 'MODEL_NOT_CONFIGURED' });
    await expect(createEmbedder({ kind: 'openai' })).rejects.toMatchObject({ code: 'MODEL_NOT_CONFIGURED' });
  });
});

describe(CachedEmbedder.name, () => {
  describe('embed', () => {
    it('should embed each distinct text once and evict the least recently used', async () => {
      const seen: string[] = [];
      const inner = new HashingEmbedder({ dimension: 16 });
      const counting: Embedder = {
        id: inner.id,
        dimension: 16,
        kind: 'lexical',
        embed: (t) => {
          seen.push(...t);
          return inner.embed(t);
        },
      };
      const cached = new CachedEmbedder(counting, 2);
      const [a1] = await cached.embed(['a', 'a']);
      await cached.embed(['b']);
      const [a2] = await cached.embed(['a']);
      await cached.embed(['c']);
      await cached.embed(['b', 'a']);
      expect(a2).toBe(a1);
      expect(seen).toEqual(['a', 'b', 'c', 'b']);
      expect([cached.id, cached.dimension, cached.kind]).toEqual(['hash-v2-16', 16, 'lexical']);
    });
  });
});
