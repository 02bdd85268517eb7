import type { Provider } from '@nestjs/common';
import type { DurableChanges } from '#durable';
import { BUS, type Bus } from '#bus';
import { moveEarlierData } from '#kv';
import { LOGGER, type Logger } from '#logging';
import { VECTOR_STORE, type Collection, type VectorStore } from '#vector-store';
import { CheckpointRepository } from './checkpoints/checkpoint.repository.js';
import { memoryOutboxDir, openMemoryChanges } from './memory-changes.js';
import { MemoryRepository } from './memory.repository.js';
import { migrateProvenance } from './provenance/provenance-migration.js';
import { RemediationRepository } from './remediations/remediation.repository.js';
import { MemoryFeedbackRepository } from './feedback/memory-feedback.repository.js';
import { moveFeedbackRows, openLegacyFeedback } from './feedback/memory-feedback.migration.js';

export const MEMORY_CHANGES = Symbol('MEMORY_CHANGES');

/**
 * The memory service's outbox (see memory-changes.ts), opened once the records' collections are (their journaled
 * writes are replayed into them); then older provenance rows are moved into the records and older feedback rows into
 * the counters. Closed at shutdown after publishing what it can.
 */
export function memoryChangesProviders(config: { readonly ALFRED_DATA_DIR: string }): Provider[] {
  return [
    {
      provide: MEMORY_CHANGES,
      inject: [
        BUS,
        LOGGER,
        VECTOR_STORE,
        MemoryRepository,
        RemediationRepository,
        CheckpointRepository,
        MemoryFeedbackRepository,
      ],
      useFactory: async (
        bus: Bus,
        logger: Logger,
        store: VectorStore,
        memories: MemoryRepository,
        remediations: RemediationRepository,
        checkpoints: CheckpointRepository,
        feedback: MemoryFeedbackRepository,
      ) => {
        const records: Collection[] = [memories.collection, checkpoints.collection, remediations.collection];
        // An earlier version's feedback rows: replayed into (their writes may wait in the outbox), then moved.
        const legacyFeedback = await openLegacyFeedback(store);
        const targets = [...records, ...(legacyFeedback ? [legacyFeedback] : [])].flatMap((c) =>
          c.journal ? [c.journal] : [],
        );
        const changes = await openMemoryChanges(
          bus,
          memoryOutboxDir(config.ALFRED_DATA_DIR),
          { memories, remediations, checkpoints },
          logger,
          targets,
        );
        await migrateProvenance(store, records, logger);
        if (legacyFeedback)
          await moveEarlierData(logger, 'memory feedback counts', () =>
            moveFeedbackRows(store, legacyFeedback, feedback),
          );
        return changes;
      },
    },
    {
      provide: 'MEMORY_CHANGES_CLOSER',
      inject: [MEMORY_CHANGES],
      useFactory: (changes: DurableChanges) => ({ onApplicationShutdown: () => changes.close() }),
    },
  ];
}
