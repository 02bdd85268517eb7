import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import type { ServiceDefinition } from '#runtime';
import { createSessionStore, type SessionStore } from '#sessions';
import { SESSION_STORE, SessionHandlers } from './handlers/session.handlers.js';

export const agentRuntimeEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv });
export type AgentRuntimeConfig = z.output<typeof agentRuntimeEnvSchema>;

/** The agent-runtime service: serves sessions over the bus (the agent loop comes with its own issue). */
@Module({})
export class AgentRuntimeModule {
  static forRoot(config: AgentRuntimeConfig): DynamicModule {
    return {
      module: AgentRuntimeModule,
      providers: [
        { provide: SESSION_STORE, useFactory: () => createSessionStore(config) },
        {
          provide: 'SESSION_STORE_CLOSER',
          inject: [SESSION_STORE],
          useFactory: (store: SessionStore) => ({ onApplicationShutdown: () => store.close() }),
        },
        SessionHandlers,
      ],
    };
  }
}

export const agentRuntimeService: ServiceDefinition<AgentRuntimeConfig> = {
  name: ServiceName.AgentRuntime,
  envSchema: agentRuntimeEnvSchema,
  loadConfig: (env) => parseEnv(agentRuntimeEnvSchema, env),
  module: (config) => AgentRuntimeModule.forRoot(config),
};
