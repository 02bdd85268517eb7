import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const compactorEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv });
export type CompactorConfig = z.output<typeof compactorEnvSchema>;

/** The compactor service: a shell that starts, answers health and stops cleanly until its issue lands. */
@Module({})
export class CompactorModule {
  static forRoot(_config: CompactorConfig): DynamicModule {
    return { module: CompactorModule, providers: [] };
  }
}

export const compactorService: ServiceDefinition<CompactorConfig> = {
  name: ServiceName.Compactor,
  envSchema: compactorEnvSchema,
  loadConfig: (env) => parseEnv(compactorEnvSchema, env),
  module: (config) => CompactorModule.forRoot(config),
};
