import type { Provider } from '@nestjs/common';
import { BUS, type Bus, type DurableChanges } from '#bus';
import { LOGGER, type Logger } from '#logging';
import { CheckpointRepository } from './checkpoints/checkpoint.repository.js';
import { memoryOutboxDir, openMemoryChanges } from './memory-changes.js';
import { MemoryRepository } from './memory.repository.js';
import { RemediationRepository } from './remediations/remediation.repository.js';

export const MEMORY_CHANGES = Symbol('MEMORY_CHANGES');

/** The memory service's outbox (see memory-changes.ts), closed at shutdown after publishing what it can. */
export function memoryChangesProviders(config: { readonly ALFRED_DATA_DIR: string }): Provider[] {
  return [
    {
      provide: MEMORY_CHANGES,
      inject: [BUS, LOGGER, MemoryRepository, RemediationRepository, CheckpointRepository],
      useFactory: (bus: Bus, logger: Logger, memories: MemoryRepository, remediations: RemediationRepository, checkpoints: CheckpointRepository) =>
        openMemoryChanges(bus, memoryOutboxDir(config.ALFRED_DATA_DIR), { memories, remediations, checkpoints }, logger),
    },
    {
      provide: 'MEMORY_CHANGES_CLOSER',
      inject: [MEMORY_CHANGES],
      useFactory: (changes: DurableChanges) => ({ onApplicationShutdown: () => changes.close() }),
    },
  ];
}
