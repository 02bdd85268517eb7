import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const agentRuntimeEnvSchema = z.object({ ...baseEnv, ...redisEnv, ...llmEnv });
export type AgentRuntimeConfig = z.output<typeof agentRuntimeEnvSchema>;

/** The agent-runtime service: a shell that starts, answers health and stops cleanly until its issue lands. */
@Module({})
export class AgentRuntimeModule {
  static forRoot(_config: AgentRuntimeConfig): DynamicModule {
    return { module: AgentRuntimeModule, providers: [] };
  }
}

export const agentRuntimeService: ServiceDefinition<AgentRuntimeConfig> = {
  name: ServiceName.AgentRuntime,
  envSchema: agentRuntimeEnvSchema,
  loadConfig: (env) => parseEnv(agentRuntimeEnvSchema, env),
  module: (config) => AgentRuntimeModule.forRoot(config),
};
