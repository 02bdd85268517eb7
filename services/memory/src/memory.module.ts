import { Module, type DynamicModule } from '@nestjs/common';
import { ServiceName } from '#contracts';
import { BUS, serviceCounters, type Bus } from '#bus';
import { CachedEmbedder, EMBEDDER, type Embedder } from '#embeddings';
import { memoryProfile, Ranker } from '#ranking';
import type { ServiceDefinition } from '#runtime';
import { embeddingProviders, VECTOR_STORE, type VectorStore } from '#vector-store';
import { loadMemoryConfig, memoryEnvSchema, type MemoryConfig } from './config.js';
import { MemoryCache } from './memory-cache.js';
import { subscribeCacheInvalidation } from './memory-cache.invalidation.js';
import { BusMemoryHistory } from './memory-events.js';
import { MEMORY_CHANGES, memoryChangesProviders } from './memory-changes.providers.js';
import type { DurableChanges } from '#durable';
import { MemoryHandlers } from './handlers/memory.handlers.js';
import { MEMORY_COLLECTION, MemoryRepository, memoryCollectionSpec } from './memory.repository.js';
import { MemoryService } from './memory.service.js';
import { MemoryFeedbackRepository } from './feedback/memory-feedback.repository.js';
import { MemorySearch } from './search/memory-search.js';
import { Reindexer } from './reindexer.js';
import { recallProviders } from './recall.providers.js';
import { MemoryWriteGuard } from './safety/memory-write.guard.js';
import { SecretGuard } from '#content-safety';

@Module({})
export class MemoryModule {
  static forRoot(config: MemoryConfig): DynamicModule {
    return {
      module: MemoryModule,
      providers: [
        ...embeddingProviders(config),
        {
          provide: MemoryRepository,
          inject: [VECTOR_STORE, EMBEDDER],
          useFactory: async (store: VectorStore, embedder: Embedder) =>
            new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension))),
        },
        { provide: MemoryCache, useFactory: () => new MemoryCache() },
        {
          // Subscribed before the handlers serve, so no change of another instance is missed once reads are cached.
          provide: 'MEMORY_CACHE_INVALIDATION',
          inject: [BUS, MemoryCache],
          useFactory: async (bus: Bus, cache: MemoryCache) => {
            const subscription = await subscribeCacheInvalidation(bus, cache);
            return { onApplicationShutdown: () => subscription.close() };
          },
        },
        ...memoryChangesProviders(config),
        {
          provide: MemoryService,
          inject: [MemoryRepository, EMBEDDER, BUS, MemoryCache, MEMORY_CHANGES, MemoryWriteGuard],
          useFactory: (
            repo: MemoryRepository,
            embedder: Embedder,
            bus: Bus,
            cache: MemoryCache,
            changes: DurableChanges,
            guard: MemoryWriteGuard,
          ) => new MemoryService(repo, embedder, changes, new BusMemoryHistory(bus), { guard, cache }),
        },
        {
          // Counters: distributed, the bucket every instance increments (compare-and-set); embedded, files.
          provide: MemoryFeedbackRepository,
          inject: [BUS],
          useFactory: (bus: Bus) => new MemoryFeedbackRepository(serviceCounters(bus, config.ALFRED_DATA_DIR)),
        },
        {
          provide: MemorySearch,
          inject: [MemoryRepository, MemoryFeedbackRepository, EMBEDDER],
          useFactory: (repo: MemoryRepository, feedback: MemoryFeedbackRepository, embedder: Embedder) =>
            new MemorySearch(
              repo,
              feedback,
              new CachedEmbedder(embedder, 1_000),
              new Ranker(memoryProfile(embedder.kind)),
            ),
        },
        Reindexer,
        {
          provide: MemoryWriteGuard,
          useFactory: () => new MemoryWriteGuard(new SecretGuard(config.ALFRED_SECRETS_REDACT_TENANTS)),
        },
        MemoryHandlers,
        ...recallProviders,
        {
          provide: 'MEMORY_STORE_CLOSER',
          inject: [VECTOR_STORE],
          useFactory: (store: VectorStore) => ({ onApplicationShutdown: () => store.close() }),
        },
      ],
    };
  }
}

/** The memory service as its hosts start it. */
export const memoryService: ServiceDefinition<MemoryConfig> = {
  name: ServiceName.Memory,
  envSchema: memoryEnvSchema,
  loadConfig: loadMemoryConfig,
  module: (config) => MemoryModule.forRoot(config),
  readiness: (app) => {
    const store = app.get<VectorStore>(VECTOR_STORE);
    return [{ name: 'vector-store', check: async () => (await store.describe(MEMORY_COLLECTION)) !== undefined }];
  },
};
