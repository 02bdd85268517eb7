import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { baseEnv, parseEnv } from '#config';
import type { ServiceDefinition } from '#runtime';

export const distillerEnvSchema = z.object({ ...baseEnv });
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
  loadConfig: (env) => parseEnv(distillerEnvSchema, env),
  module: (config) => DistillerModule.forRoot(config),
};
