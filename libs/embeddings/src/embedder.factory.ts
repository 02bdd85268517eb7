import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { Embedder } from './embedder.js';
import { HashingEmbedder } from './hashing.embedder.js';
import { OnnxEmbedder } from './onnx.embedder.js';
import { OpenAiEmbedder } from './openai.embedder.js';

export const EmbedderKind = { Auto: 'auto', Onnx: 'onnx', OpenAi: 'openai', Hash: 'hash' } as const;
export type EmbedderKind = (typeof EmbedderKind)[keyof typeof EmbedderKind];

export interface EmbedderConfig {
  readonly kind: EmbedderKind;
  /** A local model folder (ALFRED_EMBEDDINGS_MODEL_DIR). */
  readonly modelDir?: string;
  /** An OpenAI-compatible endpoint (ALFRED_EMBEDDINGS_URL / _MODEL / _API_KEY). */
  readonly openai?: { readonly url: string; readonly model: string; readonly apiKey?: string };
  /** Hashing embedder dimension (default 384). */
  readonly dimension?: number;
}

/** The start-up announcement when only the lexical fallback is available. */
export const LEXICAL_FALLBACK_NOTICE =
  'Embeddings: no semantic model found, using the lexical hashing embedder (hash-v2). Search matches word ' +
  'overlap only, with no semantic similarity. To fix it, run `npx alfred models pull` to fetch a small local ' +
  'sentence model, or set ALFRED_EMBEDDINGS_URL (and ALFRED_EMBEDDINGS_API_KEY) to an OpenAI-compatible ' +
  'embeddings endpoint.';

async function hasModel(dir: string | undefined): Promise<boolean> {
  if (dir === undefined) return false;
  try {
    await Promise.all(['config.json', 'tokenizer.json'].map((f) => access(join(dir, f))));
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds and initialises the configured embedder. `auto` picks the endpoint when one is configured,
 * else a local model folder when one exists, else the hashing fallback (and returns the notice to log).
 */
export async function createEmbedder(config: EmbedderConfig): Promise<{ embedder: Embedder; notice?: string }> {
  switch (config.kind) {
    case 'hash':
      return { embedder: new HashingEmbedder({ dimension: config.dimension }) };
    case 'onnx':
      if (config.modelDir === undefined)
        throw new AlfredError(ErrorCode.ModelNotConfigured, 'ALFRED_EMBEDDER=onnx needs ALFRED_EMBEDDINGS_MODEL_DIR');
      return { embedder: await new OnnxEmbedder({ modelDir: config.modelDir }).init() };
    case 'openai':
      if (config.openai === undefined)
        throw new AlfredError(ErrorCode.ModelNotConfigured, 'ALFRED_EMBEDDER=openai needs ALFRED_EMBEDDINGS_URL');
      return { embedder: await new OpenAiEmbedder(config.openai).init() };
    case 'auto':
      if (config.openai !== undefined) return createEmbedder({ ...config, kind: 'openai' });
      if (await hasModel(config.modelDir)) return createEmbedder({ ...config, kind: 'onnx' });
      return { embedder: new HashingEmbedder({ dimension: config.dimension }), notice: LEXICAL_FALLBACK_NOTICE };
  }
}
