import { createLogger } from '#logging';
import { exitOnConfigError, onShutdown } from '#runtime';
import { startEmbedded } from './composite.js';
import { loadGatewayConfig, type GatewayConfig } from './gateway/src/config.js';

/** `npm start`: every service and the gateway in one process on the embedded default. */
let gateway: GatewayConfig;
try {
  gateway = loadGatewayConfig(process.env);
} catch (err) {
  exitOnConfigError('alfred', err);
}
const logger = createLogger({ service: 'alfred', level: gateway.ALFRED_LOG_LEVEL, instance: 'embedded' });
try {
  const alfred = await startEmbedded({ env: process.env, gateway, logger });
  logger.info({ url: alfred.url, dataDir: gateway.ALFRED_DATA_DIR }, `Alfred is listening on ${alfred.url}`);
  onShutdown(logger, gateway.ALFRED_SHUTDOWN_DEADLINE_MS, () => alfred.stop());
} catch (err) {
  exitOnConfigError('alfred', err);
}
