import { resolve } from 'node:path';
import { Module, type DynamicModule } from '@nestjs/common';
import { BUS, serviceCounters, type Bus } from '#bus';
import { moveEarlierData } from '#kv';
import { ServiceName } from '#contracts';
import { EMBEDDER, type Embedder } from '#embeddings';
import { LOGGER, type Logger } from '#logging';
import type { ServiceDefinition } from '#runtime';
import { embeddingProviders, VECTOR_STORE, type VectorStore } from '#vector-store';
import { SkillCatalog } from '#skills';
import { SecretGuard } from '#content-safety';
import { moveSkillOutcomeRows, SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';
import {
  loadSkillRegistryConfig,
  projectSkillsDirOf,
  skillRegistryEnvSchema,
  skillRootsOf,
  type SkillRegistryConfig,
} from './config.js';
import { executableSkillProviders } from './executable/executable-skills.module.js';
import { InstallRecordsRepository } from './install/install-records.repository.js';
import { skillInstallProviders } from './install/skill-install.providers.js';
import { moveSkillProvenanceRows } from './records/skill-provenance.migration.js';
import { SkillProvenanceRepository } from './records/skill-provenance.repository.js';
import { skillProvenanceRepository } from './records/skill-provenance.store.js';
import { SkillRegistryHandlers } from './handlers/skill-registry.handlers.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { openSkillCollection, SKILL_COLLECTION, SkillSearchRepository } from './skill-search.repository.js';

@Module({})
export class SkillRegistryModule {
  static forRoot(config: SkillRegistryConfig): DynamicModule {
    return {
      module: SkillRegistryModule,
      providers: [
        ...embeddingProviders(config),
        ...executableSkillProviders(config),
        ...skillInstallProviders(config),
        {
          // Outcome counts: distributed, the counters bucket every instance increments (compare-and-set); embedded,
          // files.
          provide: SkillOutcomeRepository,
          inject: [VECTOR_STORE, BUS, LOGGER],
          useFactory: async (store: VectorStore, bus: Bus, logger: Logger) => {
            const counters = serviceCounters(bus, config.ALFRED_DATA_DIR);
            await moveEarlierData(logger, 'skill outcome counts', () => moveSkillOutcomeRows(store, counters));
            return new SkillOutcomeRepository(counters);
          },
        },
        {
          provide: SkillProvenanceRepository,
          inject: [VECTOR_STORE, BUS, LOGGER],
          useFactory: async (store: VectorStore, bus: Bus, logger: Logger) => {
            const repo = skillProvenanceRepository(bus, config.ALFRED_DATA_DIR);
            await moveEarlierData(logger, 'skill provenance', () => moveSkillProvenanceRows(store, repo));
            return repo;
          },
        },
        {
          provide: SkillSearchRepository,
          inject: [VECTOR_STORE, EMBEDDER],
          useFactory: async (store: VectorStore, embedder: Embedder) =>
            new SkillSearchRepository(await openSkillCollection(store, embedder.id, embedder.dimension)),
        },
        {
          provide: SkillRegistryService,
          inject: [
            SkillSearchRepository,
            EMBEDDER,
            LOGGER,
            SkillOutcomeRepository,
            SkillProvenanceRepository,
            InstallRecordsRepository,
          ],
          useFactory: async (
            repo: SkillSearchRepository,
            embedder: Embedder,
            logger: Logger,
            outcomes: SkillOutcomeRepository,
            provenance: SkillProvenanceRepository,
            installs: InstallRecordsRepository,
          ) => {
            const catalog = new SkillCatalog({
              roots: skillRootsOf(config),
              resources: { maxBytes: config.ALFRED_SKILLS_RESOURCE_MAX_BYTES, maxEntries: 1000 },
            });
            const registry = new SkillRegistryService(catalog, repo, embedder, {
              projectSkillsDir: projectSkillsDirOf(config),
              tenantSkillsDir: resolve(config.ALFRED_DATA_DIR, 'tenant-skills'),
              indexBudget: config.ALFRED_SKILLS_INDEX_BUDGET,
              logger: logger.child({ context: SkillRegistryService.name }),
              secrets: new SecretGuard(config.ALFRED_SECRETS_REDACT_TENANTS),
              outcomes,
              provenance,
              installs,
            });
            await registry.start(config.ALFRED_SKILLS_WATCH);
            return registry;
          },
        },
        SkillRegistryHandlers,
        {
          // Watchers stop and the index update in flight settles before the store closes.
          provide: 'SKILL_REGISTRY_CLOSER',
          inject: [SkillRegistryService, VECTOR_STORE],
          useFactory: (registry: SkillRegistryService, store: VectorStore) => ({
            onApplicationShutdown: async () => {
              await registry.close();
              await store.close();
            },
          }),
        },
      ],
    };
  }
}

/** The skill-registry service as its hosts start it. */
export const skillRegistryService: ServiceDefinition<SkillRegistryConfig> = {
  name: ServiceName.SkillRegistry,
  envSchema: skillRegistryEnvSchema,
  loadConfig: loadSkillRegistryConfig,
  module: (config) => SkillRegistryModule.forRoot(config),
  readiness: (app) => {
    const store = app.get<VectorStore>(VECTOR_STORE);
    return [{ name: 'vector-store', check: async () => (await store.describe(SKILL_COLLECTION)) !== undefined }];
  },
};
