import { z } from 'zod';
import { baseEnv, contentSafetyEnv, embeddingEnv, parseEnv } from '#config';

export const memoryEnvSchema = z.object({ ...baseEnv, ...embeddingEnv, ...contentSafetyEnv });
export type MemoryConfig = z.output<typeof memoryEnvSchema>;

export function loadMemoryConfig(env: NodeJS.ProcessEnv): MemoryConfig {
  return parseEnv(memoryEnvSchema, env);
}
