import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import { createLlmClient } from '#llm';
import type { ServiceDefinition } from '#runtime';
import { createSessionStore, type SessionStore } from '#sessions';
import { CompactorService } from './compactor.service.js';
import { CompactorHandlers } from './handlers/compactor.handlers.js';

export const compactorEnvSchema = z.object({
  ...baseEnv,
  ...redisEnv,
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

const SESSION_STORE = Symbol('SESSION_STORE');

/** The compactor service: session compaction with Claude, or an extractive summary without a model. */
@Module({})
export class CompactorModule {
  static forRoot(config: CompactorConfig): DynamicModule {
    return {
      module: CompactorModule,
      providers: [
        { provide: SESSION_STORE, useFactory: () => createSessionStore(config) },
        {
          provide: CompactorService,
          inject: [SESSION_STORE],
          useFactory: (store: SessionStore) =>
            new CompactorService(store, createLlmClient(config), {
              defaultPreserveRecent: config.ALFRED_COMPACT_PRESERVE_RECENT,
              requireModel: config.ALFRED_REQUIRE_MODEL,
            }),
        },
        {
          provide: 'SESSION_STORE_CLOSER',
          inject: [SESSION_STORE],
          useFactory: (store: SessionStore) => ({ onApplicationShutdown: () => store.close() }),
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
