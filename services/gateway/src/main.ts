import { connectProcess, exitOnConfigError, onShutdown, startHealthPort } from '#runtime';
import { loadGatewayConfig, type GatewayConfig } from './config.js';
import { createGatewayApp } from './gateway.module.js';

/** The gateway as its own process over NATS. */
let config: GatewayConfig;
try {
  config = loadGatewayConfig(process.env);
} catch (err) {
  exitOnConfigError('gateway', err);
}
const { logger, bus } = await connectProcess('gateway', config);
const app = await createGatewayApp(config, { bus, logger });
await app.listen({ host: config.ALFRED_API_HOST, port: config.ALFRED_API_PORT });
const address = app.getHttpServer().address();
const port = typeof address === 'object' && address ? address.port : config.ALFRED_API_PORT;
logger.info({ host: config.ALFRED_API_HOST, port }, `gateway listening on http://${config.ALFRED_API_HOST}:${port}`);
const health = await startHealthPort(config, [{ name: 'bus', check: () => bus.isConnected() }]);
onShutdown(logger, config.ALFRED_SHUTDOWN_DEADLINE_MS, async () => {
  health?.close();
  await app.close();
  await bus.close(config.ALFRED_SHUTDOWN_DEADLINE_MS);
});
