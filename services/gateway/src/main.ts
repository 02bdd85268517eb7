import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { NatsBus } from '#bus';
import { createLogger } from '#logging';
import { exitOnConfigError, onShutdown } from '#runtime';
import { loadGatewayConfig, type GatewayConfig } from './config.js';
import { createGatewayApp } from './gateway.module.js';

/** The gateway as its own process over NATS. */
let config: GatewayConfig;
try {
  config = loadGatewayConfig(process.env);
} catch (err) {
  exitOnConfigError('gateway', err);
}
if (!config.NATS_URL) {
  process.stderr.write('gateway: NATS_URL is required to run the gateway as its own process; `npm start` runs everything in one process\n');
  process.exit(1);
}
const instance = `${hostname()}-${randomUUID().slice(0, 8)}`;
const logger = createLogger({ service: 'gateway', level: config.ALFRED_LOG_LEVEL, instance });
const bus = await NatsBus.connect({
  url: config.NATS_URL,
  name: `alfred-gateway-${instance}`,
  subjectPrefix: config.ALFRED_SUBJECT_PREFIX,
  defaultTimeoutMs: config.ALFRED_BUS_TIMEOUT_MS,
  logger,
});
const app = await createGatewayApp(config, { bus, logger });
await app.listen({ host: config.ALFRED_API_HOST, port: config.ALFRED_API_PORT });
const address = app.getHttpServer().address();
const port = typeof address === 'object' && address ? address.port : config.ALFRED_API_PORT;
logger.info({ host: config.ALFRED_API_HOST, port }, `gateway listening on http://${config.ALFRED_API_HOST}:${port}`);
onShutdown(logger, config.ALFRED_SHUTDOWN_DEADLINE_MS, async () => {
  await app.close();
  await bus.close(config.ALFRED_SHUTDOWN_DEADLINE_MS);
});
