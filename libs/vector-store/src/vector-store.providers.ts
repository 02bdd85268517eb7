import { join } from 'node:path';
import type { Provider } from '@nestjs/common';
import type { EmbeddingConfig } from '#config';
import { createEmbedderFromConfig, EMBEDDER } from '#embeddings';
import { LOGGER, type Logger } from '#logging';
import { LanceDbStore } from './lancedb.store.js';
import { residentBudget } from './mirror/resident-budget.js';
import { QdrantStore } from './qdrant.store.js';
import { VECTOR_STORE, type VectorStore } from './vector-store.js';

/** Qdrant when QDRANT_URL is set, else LanceDB under the data dir. */
export function createVectorStoreFromConfig(config: EmbeddingConfig): VectorStore {
  if (config.QDRANT_URL) {
    return new QdrantStore({
      url: config.QDRANT_URL,
      ...(config.QDRANT_API_KEY ? { apiKey: config.QDRANT_API_KEY } : {}),
    });
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
