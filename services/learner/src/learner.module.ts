import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const learnerEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv });
export type LearnerConfig = z.output<typeof learnerEnvSchema>;

/** The learner service: a shell that starts, answers health and stops cleanly until its issue lands. */
@Module({})
export class LearnerModule {
  static forRoot(_config: LearnerConfig): DynamicModule {
    return { module: LearnerModule, providers: [] };
  }
}

export const learnerService: ServiceDefinition<LearnerConfig> = {
  name: ServiceName.Learner,
  envSchema: learnerEnvSchema,
  loadConfig: (env) => parseEnv(learnerEnvSchema, env),
  module: (config) => LearnerModule.forRoot(config),
};
