import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const distillerEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv });
export type DistillerConfig = z.output<typeof distillerEnvSchema>;

/** The distiller service: a shell that starts, answers health and stops cleanly until its issue lands. */
@Module({})
export class DistillerModule {
  static forRoot(_config: DistillerConfig): DynamicModule {
    return { module: DistillerModule, providers: [] };
  }
}

export const distillerService: ServiceDefinition<DistillerConfig> = {
  name: ServiceName.Distiller,
  envSchema: distillerEnvSchema,
  loadConfig: (env) => parseEnv(distillerEnvSchema, env),
  module: (config) => DistillerModule.forRoot(config),
};
