import { resolve } from 'node:path';
import { Module, type DynamicModule } from '@nestjs/common';
import { BUS, sharedCounters, type Bus } from '#bus';
import { ServiceName } from '#contracts';
import { EMBEDDER, type Embedder } from '#embeddings';
import { LOGGER, type Logger } from '#logging';
import type { ServiceDefinition } from '#runtime';
import { embeddingProviders, VECTOR_STORE, type VectorStore } from '#vector-store';
import { SkillCatalog } from '#skills';
import { SecretGuard } from '#content-safety';
import { openSkillOutcomes, SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';
import { loadSkillRegistryConfig, projectSkillsDirOf, skillRegistryEnvSchema, skillRootsOf, type SkillRegistryConfig } from './config.js';
import { executableSkillProviders } from './executable/executable-skills.module.js';
import { InstallRecordsRepository } from './install/install-records.repository.js';
import { skillInstallProviders } from './install/skill-install.providers.js';
import { SkillProvenanceRepository } from './records/skill-provenance.repository.js';
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
          // Distributed, outcome counts are incremented in a KV bucket every instance shares (compare-and-set).
          provide: SkillOutcomeRepository,
          inject: [VECTOR_STORE, BUS],
          useFactory: async (store: VectorStore, bus: Bus) =>
            new SkillOutcomeRepository(await openSkillOutcomes(store), sharedCounters(bus)),
        },
        { provide: SkillProvenanceRepository, inject: [VECTOR_STORE], useFactory: (store: VectorStore) => SkillProvenanceRepository.open(store) },
        {
          provide: SkillSearchRepository,
          inject: [VECTOR_STORE, EMBEDDER],
          useFactory: async (store: VectorStore, embedder: Embedder) =>
            new SkillSearchRepository(await openSkillCollection(store, embedder.id, embedder.dimension)),
        },
        {
          provide: SkillRegistryService,
          inject: [SkillSearchRepository, EMBEDDER, LOGGER, SkillOutcomeRepository, SkillProvenanceRepository, InstallRecordsRepository],
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
