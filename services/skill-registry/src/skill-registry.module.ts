import { resolve } from 'node:path';
import { Module, type DynamicModule } from '@nestjs/common';
import { ServiceName } from '#contracts';
import { EMBEDDER, type Embedder } from '#embeddings';
import { LOGGER, type Logger } from '#logging';
import { embeddingProviders, type ServiceDefinition } from '#runtime';
import { SkillCatalog } from '#skills';
import { SecretGuard } from '#content-safety';
import { openSkillOutcomes, SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';
import { VECTOR_STORE, type VectorStore } from '#vector-store';
import { loadSkillRegistryConfig, projectSkillsDirOf, skillRegistryEnvSchema, skillRootsOf, type SkillRegistryConfig } from './config.js';
import { ExecutableSkillsModule } from './executable/executable-skills.module.js';
import { SkillRegistryHandlers } from './handlers/skill-registry.handlers.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { openSkillCollection, SKILL_COLLECTION, SkillSearchRepository } from './skill-search.repository.js';

export { skillRegistryEnvSchema, type SkillRegistryConfig } from './config.js';

@Module({})
export class SkillRegistryModule {
  static forRoot(config: SkillRegistryConfig): DynamicModule {
    return {
      module: SkillRegistryModule,
      imports: [ExecutableSkillsModule.forRoot(config)],
      providers: [
        ...embeddingProviders(config),
        {
          provide: SkillSearchRepository,
          inject: [VECTOR_STORE, EMBEDDER],
          useFactory: async (store: VectorStore, embedder: Embedder) =>
            new SkillSearchRepository(await openSkillCollection(store, embedder.id, embedder.dimension)),
        },
        {
          provide: SkillRegistryService,
          inject: [SkillSearchRepository, EMBEDDER, LOGGER, VECTOR_STORE],
          useFactory: async (repo: SkillSearchRepository, embedder: Embedder, logger: Logger, store: VectorStore) => {
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
              outcomes: new SkillOutcomeRepository(await openSkillOutcomes(store)),
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
