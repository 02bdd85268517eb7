import { join } from 'node:path';
import type { embeddingEnv } from '#config';
import type { Provider } from '@nestjs/common';
import { createEmbedder, DEFAULT_MODEL, EMBEDDER, type Embedder } from '#embeddings';
import { LOGGER, type Logger } from '#logging';
import { LanceDbStore, QdrantStore, residentBudget, VECTOR_STORE, type VectorStore } from '#vector-store';
import type { z } from 'zod';

/** The parsed embedding variables of a service's config (memory, skill-registry). */
export type EmbeddingConfig = z.output<z.ZodObject<typeof embeddingEnv>> & { ALFRED_DATA_DIR: string };

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

/** Qdrant when QDRANT_URL is set, else LanceDB under the data dir. */
export function createVectorStoreFromConfig(config: EmbeddingConfig): VectorStore {
  if (config.QDRANT_URL) {
    return new QdrantStore({ url: config.QDRANT_URL, ...(config.QDRANT_API_KEY ? { apiKey: config.QDRANT_API_KEY } : {}) });
  }
  if (config.ALFRED_MEMORY_CACHE_MB !== undefined) residentBudget.setLimit(config.ALFRED_MEMORY_CACHE_MB * 2 ** 20);
  return new LanceDbStore({ dir: join(config.ALFRED_DATA_DIR, 'vectors') });
}

/** The EMBEDDER and VECTOR_STORE providers of a service that embeds text (it closes the store on shutdown itself). */
export function embeddingProviders(config: EmbeddingConfig): Provider[] {
  return [
    { provide: EMBEDDER, inject: [LOGGER], useFactory: (logger: Logger) => createEmbedderFromConfig(config, logger) },
    { provide: VECTOR_STORE, useFactory: () => createVectorStoreFromConfig(config) },
  ];
}
