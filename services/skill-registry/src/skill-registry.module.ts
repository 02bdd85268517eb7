import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, embeddingEnv, parseEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const skillRegistryEnvSchema = z.object({ ...baseEnv, ...embeddingEnv });
export type SkillRegistryConfig = z.output<typeof skillRegistryEnvSchema>;

/** The skill-registry service: a shell that starts, answers health and stops cleanly until its issue lands. */
@Module({})
export class SkillRegistryModule {
  static forRoot(_config: SkillRegistryConfig): DynamicModule {
    return { module: SkillRegistryModule, providers: [] };
  }
}

export const skillRegistryService: ServiceDefinition<SkillRegistryConfig> = {
  name: ServiceName.SkillRegistry,
  envSchema: skillRegistryEnvSchema,
  loadConfig: (env) => parseEnv(skillRegistryEnvSchema, env),
  module: (config) => SkillRegistryModule.forRoot(config),
};
