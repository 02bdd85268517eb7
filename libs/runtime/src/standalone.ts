import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { baseEnv, busSettings, ConfigError, parseEnv } from '#config';
import { NatsBus } from '#bus';
import { createLogger, setProcessLogger, type Logger } from '#logging';
import { redisReadiness, startHealthServer, type ReadinessCheck } from './health.js';
import { exitOnConfigError, logProcessFailures, onShutdown } from './process.js';
import { hostService, type ServiceDefinition } from './service-host.js';

const baseSchema = z.object(baseEnv);
export type BaseConfig = z.output<typeof baseSchema>;

/** What a process of the distributed shape has once it is connected: its logger, its bus, its instance id. */
export interface ConnectedProcess {
  readonly instance: string;
  readonly logger: Logger;
  readonly bus: NatsBus;
}

/**
 * The distributed shape needs state every instance can reach: a service whose schema reads REDIS_URL keeps its
 * sessions, jobs or files there, and a file store under one container's data dir would silently split them.
 */
export function assertDistributedConfig(name: string, envSchema: z.ZodObject, env: NodeJS.ProcessEnv): void {
  if ('REDIS_URL' in envSchema.shape && !env.REDIS_URL) {
    throw new ConfigError([
      `REDIS_URL: required when ${name} runs as its own process (sessions, jobs and agent files must be ` +
        `shared by every instance); ` +
        '`npm start` runs everything in one process with files under ALFRED_DATA_DIR instead',
    ]);
  }
}

/** Logger, NATS connection (waiting for the server) and JSON logging of process-level failures. */
export async function connectProcess(name: string, base: BaseConfig): Promise<ConnectedProcess> {
  const instance = `${hostname()}-${randomUUID().slice(0, 8)}`;
  const logger = createLogger({ service: name, level: base.ALFRED_LOG_LEVEL, instance });
  logProcessFailures(logger);
  if (!base.NATS_URL) {
    process.stderr.write(
      `${name}: NATS_URL is required to run this service as its own process; \`npm start\` runs every ` +
        `service in one process without it\n`,
    );
    process.exit(1);
  }
  setProcessLogger(logger);
  const bus = await NatsBus.connect({
    url: base.NATS_URL,
    ...busSettings(base),
    name: `alfred-${name}-${instance}`,
    subjectPrefix: base.ALFRED_SUBJECT_PREFIX,
    logger,
    // A process whose broker connection is gone for good serves nothing: exit non-zero so its supervisor restarts it.
    onClosed: (err) => {
      logger.fatal({ err }, 'NATS connection closed for good; exiting so that the supervisor restarts this process');
      process.exit(1);
    },
  });
  return { instance, logger, bus };
}

/** The health port (/live, /ready, /metrics) when ALFRED_HEALTH_PORT is set, on ALFRED_HEALTH_HOST. */
export async function startHealthPort(
  base: BaseConfig,
  checks: readonly ReadinessCheck[],
): Promise<{ close(): void } | undefined> {
  if (base.ALFRED_HEALTH_PORT === undefined) return undefined;
  return startHealthServer({ host: base.ALFRED_HEALTH_HOST, port: base.ALFRED_HEALTH_PORT, checks });
}

/** Runs one service as its own process over NATS (`npm run start:<service>`, docker-compose). */
export async function runStandalone<C>(def: ServiceDefinition<C>): Promise<void> {
  let base: BaseConfig;
  let config: C;
  try {
    base = parseEnv(baseSchema);
    config = def.loadConfig(process.env);
    assertDistributedConfig(def.name, def.envSchema, process.env);
  } catch (err) {
    exitOnConfigError(def.name, err);
  }
  const { instance, logger, bus } = await connectProcess(def.name, base);
  const hosted = await hostService(def, config, { service: def.name, instance, bus, logger });
  const health = await startHealthPort(base, [
    { name: 'bus', check: () => bus.isConnected() },
    redisReadiness,
    { name: 'service', check: async () => (await hosted.ready()).ready },
  ]);
  onShutdown(logger, base.ALFRED_SHUTDOWN_DEADLINE_MS, async () => {
    health?.close();
    await hosted.stop();
    await bus.close(base.ALFRED_SHUTDOWN_DEADLINE_MS);
  });
}
