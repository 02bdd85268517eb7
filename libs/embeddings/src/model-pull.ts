import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { OnnxEmbedder } from './onnx.embedder.js';

/** The small sentence model `alfred models pull` fetches by default (384 dims, ~90 MB). */
export const DEFAULT_MODEL = {
  repo: 'Xenova/all-MiniLM-L6-v2',
  folder: 'all-MiniLM-L6-v2',
  files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'onnx/model.onnx'],
} as const;

export interface PullOptions {
  /** Model hub base URL (the Hugging Face layout: `<hub>/<repo>/resolve/<revision>/<file>`). */
  readonly hubUrl: string;
  readonly repo: string;
  readonly revision?: string;
  readonly files: readonly string[];
  /** Where the model folder is written; replaced only once every file arrived and the model loads. */
  readonly destDir: string;
  readonly fetch?: typeof fetch;
}

/**
 * Downloads a model folder into a staging directory, checks that it loads offline and embeds, then
 * moves it into place: a failed or partial pull never leaves a broken model where `auto` would pick it up.
 */
export async function pullModel(options: PullOptions): Promise<{ dir: string; dimension: number; bytes: number }> {
  const doFetch = options.fetch ?? fetch;
  const staging = `${options.destDir}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  let bytes = 0;
  try {
    for (const file of options.files) {
      const url = `${options.hubUrl.replace(/\/$/, '')}/${options.repo}/resolve/${options.revision ?? 'main'}/${file}`;
      const res = await doFetch(url, { redirect: 'follow' }).catch((err: unknown) => {
        throw new AlfredError(
          ErrorCode.ServiceUnavailable,
          `cannot reach the model hub at ${options.hubUrl}: ${(err as Error).message}`,
        );
      });
      if (!res.ok)
        throw new AlfredError(ErrorCode.ServiceUnavailable, `the model hub answered ${res.status} for ${file}`, {
          url,
        });
      const body = new Uint8Array(await res.arrayBuffer());
      bytes += body.byteLength;
      await mkdir(dirname(join(staging, file)), { recursive: true });
      await writeFile(join(staging, file), body);
    }
    const probe = await new OnnxEmbedder({ modelDir: staging }).init();
    await rm(options.destDir, { recursive: true, force: true });
    await mkdir(dirname(options.destDir), { recursive: true });
    await rename(staging, options.destDir);
    return { dir: options.destDir, dimension: probe.dimension, bytes };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
