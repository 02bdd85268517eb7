import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { BusAgentFiles } from '#agent-files';
import { moveEarlierData } from '#kv';
import { BUS, type Bus } from '#bus';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import { createLlmClient } from '#llm';
import { LOGGER, type Logger } from '#logging';
import { drainWindowMs, type ServiceDefinition } from '#runtime';
import { BusSessions } from '#sessions';
import { DistillJobs, distillQueue } from './distill-jobs.js';
import { DistillerService } from './distiller.service.js';
import { jobBuckets } from './job-buckets.js';
import { moveFileJobs, moveRedisJobs } from './job.migration.js';
import { DistillerHandlers } from './handlers/distiller.handlers.js';
import { JOB_REPOSITORY, type JobRepository } from './job.repository.js';
import { KvJobRepository } from './kv-job.repository.js';

const msList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'a comma-separated list of milliseconds')
  .transform((s) => s.split(',').map(Number));

export const distillerEnvSchema = z.object({
  ...baseEnv,
  ...redisEnv,
  ...llmEnv,
  ALFRED_DISTILL_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30_000)
    .default(2_000)
    .describe('how long `POST /distill` waits for its job before answering 202 with the job id'),
  ALFRED_DISTILL_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(5)
    .describe('deliveries of a distill job before it fails, the first included'),
  ALFRED_DISTILL_BACKOFF_MS: msList
    .default([1_000, 5_000, 30_000, 120_000])
    .describe('delays before the retries of a failed distill job, comma-separated (the last repeats)'),
  ALFRED_DISTILL_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe('distill jobs one distiller runs at once'),
  ALFRED_DISTILL_ACK_WAIT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(600_000)
    .default(10_000)
    .describe(
      "how soon after its last heartbeat a killed distiller's job is delivered again (running jobs beat every third " +
        'of it; `stalled` after two missed)',
    ),
});
export type DistillerConfig = z.output<typeof distillerEnvSchema>;

/** Jobs in key-value buckets (Redis or the data dir), with what an earlier version kept in its own layout moved in. */
async function jobRepository(config: DistillerConfig, logger: Logger): Promise<JobRepository> {
  const buckets = jobBuckets(config);
  await moveEarlierData(logger, 'jobs', () =>
    config.REDIS_URL
      ? moveRedisJobs(config.REDIS_URL, config.ALFRED_REDIS_PREFIX, buckets)
      : moveFileJobs(config.ALFRED_DATA_DIR, buckets),
  );
  return new KvJobRepository(buckets);
}

/** The distiller service: insights into MEMORY.md and memories, as durable jobs. */
@Module({})
export class DistillerModule {
  static forRoot(config: DistillerConfig): DynamicModule {
    return {
      module: DistillerModule,
      providers: [
        {
          provide: JOB_REPOSITORY,
          inject: [LOGGER],
          useFactory: (logger: Logger): Promise<JobRepository> => jobRepository(config, logger),
        },
        {
          provide: DistillJobs,
          inject: [BUS, JOB_REPOSITORY, LOGGER],
          useFactory: async (bus: Bus, repo: JobRepository, logger: Logger) => {
            // Sessions and agent files are agent-runtime's: reached through its routes.
            const distiller = new DistillerService(
              bus,
              new BusAgentFiles(bus),
              new BusSessions(bus),
              createLlmClient(config),
              config.ALFRED_REQUIRE_MODEL,
            );
            const options = {
              waitMs: config.ALFRED_DISTILL_WAIT_MS,
              maxAttempts: config.ALFRED_DISTILL_MAX_ATTEMPTS,
              backoffMs: config.ALFRED_DISTILL_BACKOFF_MS,
              concurrency: config.ALFRED_DISTILL_CONCURRENCY,
              ackWaitMs: config.ALFRED_DISTILL_ACK_WAIT_MS,
            };
            const jobs = new DistillJobs(
              distillQueue(bus, options),
              repo,
              distiller,
              logger.child({ context: DistillJobs.name }),
              options,
            );
            await jobs.start();
            return jobs;
          },
        },
        {
          provide: 'DISTILLER_CLOSER',
          inject: [DistillJobs, JOB_REPOSITORY],
          useFactory: (jobs: DistillJobs, repo: JobRepository) => ({
            // Until the shutdown deadline, less the time to hand back what cannot finish and close the stores.
            beforeApplicationShutdown: () => jobs.stop(drainWindowMs(config.ALFRED_SHUTDOWN_DEADLINE_MS)),
            onApplicationShutdown: async () => {
              await repo.close();
            },
          }),
        },
        DistillerHandlers,
      ],
    };
  }
}

export const distillerService: ServiceDefinition<DistillerConfig> = {
  name: ServiceName.Distiller,
  envSchema: distillerEnvSchema,
  loadConfig: (env) => parseEnv(distillerEnvSchema, env),
  module: (config) => DistillerModule.forRoot(config),
};
