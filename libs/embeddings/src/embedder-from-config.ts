import { join } from 'node:path';
import type { EmbeddingConfig } from '#config';
import type { Logger } from '#logging';
import type { Embedder } from './embedder.js';
import { createEmbedder } from './embedder.factory.js';
import { DEFAULT_MODEL } from './model-pull.js';

/** The local model folder: ALFRED_EMBEDDINGS_MODEL_DIR, else where `alfred models pull` puts the default model. */
export function modelDirOf(config: EmbeddingConfig): string {
  return config.ALFRED_EMBEDDINGS_MODEL_DIR ?? join(config.ALFRED_DATA_DIR, 'models', DEFAULT_MODEL.folder);
}

/** The configured embedder; the lexical fallback is announced once, with the command that fixes it. */
export async function createEmbedderFromConfig(config: EmbeddingConfig, logger: Logger): Promise<Embedder> {
  const { embedder, notice } = await createEmbedder({
    kind: config.ALFRED_EMBEDDER,
    modelDir: modelDirOf(config),
    ...(config.ALFRED_EMBEDDINGS_URL
      ? {
          openai: {
            url: config.ALFRED_EMBEDDINGS_URL,
            model: config.ALFRED_EMBEDDINGS_MODEL,
            ...(config.ALFRED_EMBEDDINGS_API_KEY ? { apiKey: config.ALFRED_EMBEDDINGS_API_KEY } : {}),
          },
        }
      : {}),
  });
  if (notice) logger.warn({ embedder: embedder.id }, notice);
  else logger.info({ embedder: embedder.id, dimension: embedder.dimension }, 'embedder ready');
  return embedder;
}
