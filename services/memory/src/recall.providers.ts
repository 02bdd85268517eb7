import type { Provider } from '@nestjs/common';
import type { DurableChanges } from '#durable';
import { BUS, type Bus } from '#bus';
import { MEMORY_CHANGES } from './memory-changes.providers.js';
import { EMBEDDER, type Embedder } from '#embeddings';
import { VECTOR_STORE, type VectorStore } from '#vector-store';
import { CheckpointRepository, checkpointCollectionSpec } from './checkpoints/checkpoint.repository.js';
import { CheckpointService } from './checkpoints/checkpoint.service.js';
import { MemoryFeedbackRepository } from './feedback/memory-feedback.repository.js';
import { MemoryFeedbackService } from './feedback/memory-feedback.service.js';
import { RecallHandlers } from './handlers/recall.handlers.js';
import { subscribeCacheInvalidation } from './memory-cache.invalidation.js';
import { MemoryService } from './memory.service.js';
import { MemorySearch } from './search/memory-search.js';
import { Ranker, remediationProfile } from '#ranking';
import { RecallService } from './recall/recall.service.js';
import { RemediationRepository, remediationCollectionSpec } from './remediations/remediation.repository.js';
import { RemediationService } from './remediations/remediation.service.js';
import { MemoryWriteGuard } from './safety/memory-write.guard.js';

/** Feedback, checkpoints, remediations and recall: the memory domain beyond memories, each in its own collection. */
export const recallProviders: Provider[] = [
  {
    provide: MemoryFeedbackService,
    inject: [MemoryService, MemoryFeedbackRepository, MEMORY_CHANGES],
    useFactory: (memories: MemoryService, repo: MemoryFeedbackRepository, changes: DurableChanges) =>
      new MemoryFeedbackService(memories, repo, changes),
  },
  {
    // Subscribed before the handlers serve, so a report made through another instance evicts cached counts here.
    provide: 'FEEDBACK_CACHE_INVALIDATION',
    inject: [BUS, MemoryFeedbackRepository],
    useFactory: async (bus: Bus, counts: MemoryFeedbackRepository) => {
      const subscription = await subscribeCacheInvalidation(bus, counts, ['feedback']);
      return { onApplicationShutdown: () => subscription.close() };
    },
  },
  {
    provide: CheckpointRepository,
    inject: [VECTOR_STORE, EMBEDDER],
    useFactory: async (store: VectorStore, embedder: Embedder) =>
      new CheckpointRepository(await store.open(checkpointCollectionSpec(embedder.id, embedder.dimension))),
  },
  {
    provide: RemediationRepository,
    inject: [VECTOR_STORE, EMBEDDER],
    useFactory: async (store: VectorStore, embedder: Embedder) =>
      new RemediationRepository(await store.open(remediationCollectionSpec(embedder.id, embedder.dimension))),
  },
  {
    provide: CheckpointService,
    inject: [CheckpointRepository, EMBEDDER, BUS, MEMORY_CHANGES, MemoryWriteGuard],
    useFactory: (
      repo: CheckpointRepository,
      embedder: Embedder,
      bus: Bus,
      changes: DurableChanges,
      guard: MemoryWriteGuard,
    ) => new CheckpointService(repo, embedder, bus, changes, guard),
  },
  {
    provide: RemediationService,
    inject: [RemediationRepository, EMBEDDER, MEMORY_CHANGES, MemoryWriteGuard],
    useFactory: (repo: RemediationRepository, embedder: Embedder, changes: DurableChanges, guard: MemoryWriteGuard) =>
      new RemediationService(repo, embedder, changes, new Ranker(remediationProfile(embedder.kind)), guard),
  },
  {
    provide: RecallService,
    inject: [MemorySearch, RemediationService, BUS],
    useFactory: (memories: MemorySearch, remediations: RemediationService, bus: Bus) =>
      new RecallService(memories, remediations, bus),
  },
  RecallHandlers,
];
