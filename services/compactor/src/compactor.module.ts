import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv } from '#config';
import { createLlmClient } from '#llm';
import type { ServiceDefinition } from '#runtime';
import { BUS, type Bus } from '#bus';
import { BusSessions } from '#sessions';
import { CompactorService } from './compactor.service.js';
import { CompactorHandlers } from './handlers/compactor.handlers.js';

export const compactorEnvSchema = z.object({
  ...baseEnv,
  ...llmEnv,
  ALFRED_COMPACT_PRESERVE_RECENT: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(10)
    .describe('recent messages a compaction keeps verbatim when its request does not say'),
});
export type CompactorConfig = z.output<typeof compactorEnvSchema>;

/** The compactor service: session compaction with Claude, or an extractive summary without a model. */
@Module({})
export class CompactorModule {
  static forRoot(config: CompactorConfig): DynamicModule {
    return {
      module: CompactorModule,
      providers: [
        {
          provide: CompactorService,
          inject: [BUS],
          // Sessions are agent-runtime's: read and replaced through its routes.
          useFactory: (bus: Bus) =>
            new CompactorService(new BusSessions(bus), createLlmClient(config), {
              defaultPreserveRecent: config.ALFRED_COMPACT_PRESERVE_RECENT,
              requireModel: config.ALFRED_REQUIRE_MODEL,
            }),
        },
        CompactorHandlers,
      ],
    };
  }
}

export const compactorService: ServiceDefinition<CompactorConfig> = {
  name: ServiceName.Compactor,
  envSchema: compactorEnvSchema,
  loadConfig: (env) => parseEnv(compactorEnvSchema, env),
  module: (config) => CompactorModule.forRoot(config),
};
