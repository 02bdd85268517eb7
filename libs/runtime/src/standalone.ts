import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { baseEnv, parseEnv } from '#config';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import { startHealthServer } from './health.js';
import { exitOnConfigError, onShutdown } from './process.js';
import { hostService, type ServiceDefinition } from './service-host.js';

const baseSchema = z.object(baseEnv);

/** Runs one service as its own process over NATS (`npm run start:<service>`, docker-compose). */
export async function runStandalone<C>(def: ServiceDefinition<C>): Promise<void> {
  let base: z.output<typeof baseSchema>;
  let config: C;
  try {
    base = parseEnv(baseSchema);
    config = def.loadConfig(process.env);
  } catch (err) {
    exitOnConfigError(def.name, err);
  }
  const instance = `${hostname()}-${randomUUID().slice(0, 8)}`;
  const logger = createLogger({ service: def.name, level: base.ALFRED_LOG_LEVEL, instance });
  if (!base.NATS_URL) {
    process.stderr.write(
      `${def.name}: NATS_URL is required to run this service as its own process; \`npm start\` runs every service in one process without it\n`,
    );
    process.exit(1);
  }
  const bus = await NatsBus.connect({
    url: base.NATS_URL,
    name: `alfred-${def.name}-${instance}`,
    subjectPrefix: base.ALFRED_SUBJECT_PREFIX,
    defaultTimeoutMs: base.ALFRED_BUS_TIMEOUT_MS,
    logger,
  });
  const hosted = await hostService(def, config, { service: def.name, instance, bus, logger });
  const health = base.ALFRED_HEALTH_PORT === undefined ? undefined : await startHealthServer(base.ALFRED_HEALTH_PORT, [
    { name: 'bus', check: () => bus.isConnected() },
    { name: 'service', check: async () => (await hosted.ready()).ready },
  ]);
  onShutdown(logger, base.ALFRED_SHUTDOWN_DEADLINE_MS, async () => {
    health?.close();
    await hosted.stop();
    await bus.close(base.ALFRED_SHUTDOWN_DEADLINE_MS);
  });
}
