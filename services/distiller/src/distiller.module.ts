import { Module, type DynamicModule } from '@nestjs/common';
import { z } from 'zod';
import { ServiceName } from '#contracts';
import { createAgentFileStore, type AgentFileStore } from '#agent-files';
import { BUS, type Bus } from '#bus';
import { baseEnv, llmEnv, parseEnv, redisEnv } from '#config';
import { createLlmClient } from '#llm';
import { LOGGER, type Logger } from '#logging';
import { drainWindowMs, type ServiceDefinition } from '#runtime';
import { createSessionStore, type SessionStore } from '#sessions';
import { DistillJobs, distillQueue } from './distill-jobs.js';
import { DistillerService } from './distiller.service.js';
import { FileJobRepository } from './file-job.repository.js';
import { DistillerHandlers } from './handlers/distiller.handlers.js';
import { JOB_REPOSITORY, type JobRepository } from './job.repository.js';
import { RedisJobRepository } from './redis-job.repository.js';

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
      'how soon after its last heartbeat a killed distiller\'s job is delivered again (running jobs beat every third ' +
        'of it; `stalled` after two missed)',
    ),
});
export type DistillerConfig = z.output<typeof distillerEnvSchema>;

const AGENT_FILES = Symbol('AGENT_FILES');
const SESSIONS = Symbol('SESSIONS');

/** The distiller service: insights into MEMORY.md and memories, as durable jobs. */
@Module({})
export class DistillerModule {
  static forRoot(config: DistillerConfig): DynamicModule {
    return {
      module: DistillerModule,
      providers: [
        { provide: AGENT_FILES, useFactory: () => createAgentFileStore(config) },
        { provide: SESSIONS, useFactory: () => createSessionStore(config) },
        {
          provide: JOB_REPOSITORY,
          useFactory: (): JobRepository =>
            config.REDIS_URL ? new RedisJobRepository(config.REDIS_URL, config.ALFRED_REDIS_PREFIX) : new FileJobRepository(config.ALFRED_DATA_DIR),
        },
        {
          provide: DistillJobs,
          inject: [BUS, AGENT_FILES, SESSIONS, JOB_REPOSITORY, LOGGER],
          useFactory: async (bus: Bus, files: AgentFileStore, sessions: SessionStore, repo: JobRepository, logger: Logger) => {
            const distiller = new DistillerService(bus, files, sessions, createLlmClient(config), config.ALFRED_REQUIRE_MODEL);
            const options = {
              waitMs: config.ALFRED_DISTILL_WAIT_MS,
              maxAttempts: config.ALFRED_DISTILL_MAX_ATTEMPTS,
              backoffMs: config.ALFRED_DISTILL_BACKOFF_MS,
              concurrency: config.ALFRED_DISTILL_CONCURRENCY,
              ackWaitMs: config.ALFRED_DISTILL_ACK_WAIT_MS,
            };
            const jobs = new DistillJobs(distillQueue(bus, options), repo, distiller, logger.child({ context: DistillJobs.name }), options);
            await jobs.start();
            return jobs;
          },
        },
        {
          provide: 'DISTILLER_CLOSER',
          inject: [DistillJobs, AGENT_FILES, SESSIONS, JOB_REPOSITORY],
          useFactory: (jobs: DistillJobs, files: AgentFileStore, sessions: SessionStore, repo: JobRepository) => ({
            // Until the shutdown deadline, less the time to hand back what cannot finish and close the stores.
            beforeApplicationShutdown: () => jobs.stop(drainWindowMs(config.ALFRED_SHUTDOWN_DEADLINE_MS)),
            onApplicationShutdown: async () => {
              await Promise.all([files.close(), sessions.close(), repo.close()]);
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
