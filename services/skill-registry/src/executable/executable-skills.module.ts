import type { Provider } from '@nestjs/common';
import { resolve } from 'node:path';
import { ExecutableSkillCatalog } from './executable-skill.catalog.js';
import { ExecutableSkillStore } from './executable-skill.store.js';
import { managedDirOf, type ExecutableSkillsConfig } from './executable-skills.config.js';
import { ExecutableSkillsHandlers } from './executable-skills.handlers.js';

/** Loads the catalog before the bus handlers start answering. */
class CatalogLoader {
  constructor(private readonly catalog: ExecutableSkillCatalog) {}

  async onModuleInit(): Promise<void> {
    await this.catalog.reload();
  }
}

/**
 * Executable skills (skill.json + execute.ts) in the skill-registry: management, validation, file delivery. Provided
 * in the registry's own module, so their handlers share its records (who wrote a skill, what its runs achieved).
 */
export function executableSkillProviders(config: ExecutableSkillsConfig): Provider[] {
  const bundled = config.ALFRED_SKILLS_BUNDLED_DIR ? resolve(config.ALFRED_SKILLS_BUNDLED_DIR) : undefined;
  return [
    { provide: ExecutableSkillStore, useFactory: () => new ExecutableSkillStore(managedDirOf(config), bundled) },
    {
      provide: ExecutableSkillCatalog,
      inject: [ExecutableSkillStore],
      useFactory: (store: ExecutableSkillStore) => new ExecutableSkillCatalog(store),
    },
    {
      provide: CatalogLoader,
      inject: [ExecutableSkillCatalog],
      useFactory: (catalog: ExecutableSkillCatalog) => new CatalogLoader(catalog),
    },
    ExecutableSkillsHandlers,
  ];
}
