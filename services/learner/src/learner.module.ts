import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { BusAgentFiles } from '#agent-files';
import { BUS, type Bus } from '#bus';
import { baseEnv, contentSafetyEnv, llmEnv, parseEnv } from '#config';
import { SecretGuard } from '#content-safety';
import { createLlmClient } from '#llm';
import type { ServiceDefinition } from '#runtime';
import { LearnerHandlers } from './handlers/learner.handlers.js';
import { LearnerService } from './learner.service.js';

export const learnerEnvSchema = z.object({
  ...baseEnv,
  ...llmEnv,
  ...contentSafetyEnv,
  ALFRED_LEARN_MIN_CONFIDENCE: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe('observations with a lower confidence are kept as pending memories without changing USER.md / SOUL.md'),
});
export type LearnerConfig = z.output<typeof learnerEnvSchema>;

/** The learner service: USER.md / SOUL.md updates (Claude, or an appended observation without a model). */
@Module({})
export class LearnerModule {
  static forRoot(config: LearnerConfig): DynamicModule {
    return {
      module: LearnerModule,
      providers: [
        {
          provide: LearnerService,
          inject: [BUS],
          // The agent files are agent-runtime's: read and written through its routes.
          useFactory: (bus: Bus) =>
            new LearnerService(new BusAgentFiles(bus), createLlmClient(config), bus, {
              minConfidence: config.ALFRED_LEARN_MIN_CONFIDENCE,
              requireModel: config.ALFRED_REQUIRE_MODEL,
              secrets: new SecretGuard(config.ALFRED_SECRETS_REDACT_TENANTS),
            }),
        },
        LearnerHandlers,
      ],
    };
  }
}

export const learnerService: ServiceDefinition<LearnerConfig> = {
  name: ServiceName.Learner,
  envSchema: learnerEnvSchema,
  loadConfig: (env) => parseEnv(learnerEnvSchema, env),
  module: (config) => LearnerModule.forRoot(config),
};
