import { Module, type DynamicModule } from '@nestjs/common';
import { ServiceName } from '#contracts';
import { BUS, type Bus } from '#bus';
import { FairSlots, SERVICE_CONTEXT, type ServiceContext, type ServiceDefinition } from '#runtime';
import { LOGGER, type Logger } from '#logging';
import { announceOsSandbox, SkillRunner } from '#sandbox';
import {
  loadSkillRunnerConfig,
  runnerDirsOf,
  skillRunnerEnvSchema,
  tenantShareOf,
  type SkillRunnerConfig,
} from './config.js';
import { ExecutionLog } from './execution-log.js';
import { SkillRunnerHandlers } from './handlers/skill-runner.handlers.js';
import { SkillExecutionService } from './skill-execution.service.js';
import { SkillFilesCache } from './skill-files.cache.js';

@Module({})
export class SkillRunnerModule {
  static forRoot(config: SkillRunnerConfig): DynamicModule {
    const dirs = runnerDirsOf(config);
    return {
      module: SkillRunnerModule,
      providers: [
        {
          provide: SkillRunner,
          inject: [LOGGER],
          useFactory: (logger: Logger) => {
            const log = logger.child({ context: 'SkillRunner' });
            // Said as soon as bubblewrap has been tried; start-up does not wait for it (executions check it
            // themselves).
            void announceOsSandbox(
              log,
              'executable skills',
              config.ALFRED_OS_SANDBOX,
              config.ALFRED_BWRAP_PATH,
              dirs.dataRoot,
            );
            const ungranted = Object.keys(config.ALFRED_SKILL_SECRETS).filter(
              (name) => !config.ALFRED_SKILL_SECRET_GRANTS[name],
            );
            if (ungranted.length)
              log.warn(
                { secrets: ungranted },
                'these skill secrets are granted to no tenant and reach no skill; grant them with ' +
                  'ALFRED_SKILL_SECRET_GRANTS=NAME=tenant|tenant2',
              );
            return new SkillRunner({
              dataRoot: dirs.dataRoot,
              secrets: config.ALFRED_SKILL_SECRETS,
              secretGrants: config.ALFRED_SKILL_SECRET_GRANTS,
              warmPoolSize: config.ALFRED_SKILL_WARM_POOL,
              osSandbox: config.ALFRED_OS_SANDBOX,
              bwrapPath: config.ALFRED_BWRAP_PATH,
              tenantDataQuotaBytes: config.ALFRED_TENANT_SKILL_DATA_QUOTA_MB * 1024 * 1024,
            });
          },
        },
        { provide: SkillFilesCache, inject: [BUS], useFactory: (bus: Bus) => new SkillFilesCache(bus, dirs.cacheDir) },
        { provide: ExecutionLog, inject: [BUS], useFactory: (bus: Bus) => new ExecutionLog(bus) },
        {
          provide: SkillExecutionService,
          inject: [BUS, SkillFilesCache, SkillRunner, ExecutionLog, SERVICE_CONTEXT, LOGGER],
          useFactory: (
            bus: Bus,
            cache: SkillFilesCache,
            runner: SkillRunner,
            log: ExecutionLog,
            ctx: ServiceContext,
            logger: Logger,
          ) =>
            new SkillExecutionService(
              bus,
              cache,
              runner,
              log,
              ctx.instance,
              new FairSlots(config.ALFRED_SKILL_CONCURRENCY, tenantShareOf(config)),
              logger.child({ context: SkillExecutionService.name }),
            ),
        },
        SkillRunnerHandlers,
        {
          // Idle warm processes are killed after the handlers have drained.
          provide: 'SKILL_RUNNER_CLOSER',
          inject: [SkillRunner],
          useFactory: (runner: SkillRunner) => ({ onApplicationShutdown: () => runner.close() }),
        },
      ],
    };
  }
}

/** The skill-runner service: executes skills in sandboxed processes; instances share a queue group. */
export const skillRunnerService: ServiceDefinition<SkillRunnerConfig> = {
  name: ServiceName.SkillRunner,
  envSchema: skillRunnerEnvSchema,
  loadConfig: loadSkillRunnerConfig,
  module: (config) => SkillRunnerModule.forRoot(config),
};
