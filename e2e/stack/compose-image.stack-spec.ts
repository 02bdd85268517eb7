import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TINY_MODEL_DIMENSION, writeTinyOnnxModel } from '../../libs/embeddings/src/testing/tiny-onnx-model.js';
import { containersOf, describeStack, docker, stack } from './stack-env.js';

/** The app image's budget (docker's own unit: 1 MB = 10^6 bytes), which the trimmed node_modules keeps it under. */
const IMAGE_BUDGET_BYTES = 600_000_000;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** The app image every Alfred service of the stack runs: its size, and that the trimming left what the app loads. */
describeStack('the app image', () => {
  it(`should fit in ${mb(IMAGE_BUDGET_BYTES)}`, async () => {
    const [memory] = await containersOf('memory-lancedb');
    const { stdout } = await docker('exec', memory!, 'du', '-sm', '/app/node_modules', '/usr/local/bin/node');
    console.log(`alfred:local is ${mb(stack.imageBytes)} (budget ${mb(IMAGE_BUDGET_BYTES)}); MiB by part:\n${stdout}`);
    expect(stack.imageBytes).toBeGreaterThan(0);
    expect(stack.imageBytes).toBeLessThanOrEqual(IMAGE_BUDGET_BYTES);
  });

  it('should still run a local ONNX embedding model (transformers.js on onnxruntime-node) after the trim', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-image-onnx-'));
    try {
      const model = await writeTinyOnnxModel(dir, 'tiny-embedder');
      await chmod(dir, 0o755);
      const [memory] = await containersOf('memory-lancedb');
      await docker('exec', '-u', 'root', memory!, 'rm', '-rf', '/tmp/onnx-check');
      await docker('cp', dir, `${memory}:/tmp/onnx-check`);
      const probe =
        "const { OnnxEmbedder } = await import('/app/dist/libs/embeddings/src/onnx.embedder.js');" +
        "const [v] = await new OnnxEmbedder({ modelDir: '/tmp/onnx-check/tiny-embedder' }).embed(['the cat sat']);" +
        'console.log(v.length, Math.hypot(...v).toFixed(3));';
      const { stdout } = await docker('exec', '-w', '/app', memory!, 'node', '--input-type=module', '-e', probe);
      expect(stdout.trim()).toBe(`${TINY_MODEL_DIMENSION} 1.000`);
      expect(model).toMatch(/tiny-embedder$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
