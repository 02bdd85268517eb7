import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InProcessBus, type Bus } from '#bus';
import type { Logger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { ALL_SERVICES } from './all-services.js';
import type { GatewayConfig } from './gateway/src/config.js';
import { createGatewayApp } from './gateway/src/gateway.module.js';

/** The whole platform in one process: in-process bus, every service, the gateway. */
export interface EmbeddedAlfred {
  readonly bus: Bus;
  readonly app: NestFastifyApplication;
  readonly services: readonly HostedService[];
  /** The base URL the gateway listens on. */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startEmbedded(options: {
  env: NodeJS.ProcessEnv;
  gateway: GatewayConfig;
  logger: Logger;
  /** Overrides ALFRED_API_PORT (0 picks a free port, for tests). */
  port?: number;
}): Promise<EmbeddedAlfred> {
  const { gateway, logger } = options;
  const bus = new InProcessBus({
    dataDir: join(gateway.ALFRED_DATA_DIR, 'bus'),
    defaultTimeoutMs: gateway.ALFRED_BUS_TIMEOUT_MS,
    logger,
  });
  const services: HostedService[] = [];
  try {
    for (const def of ALL_SERVICES) {
      const config = def.loadConfig(options.env);
      services.push(await hostService(def, config, { service: def.name, instance: 'embedded', bus, logger: logger.child({ service: def.name }) }));
    }
    const app = await createGatewayApp(gateway, { bus, logger: logger.child({ service: 'gateway' }) });
    await app.listen({ host: gateway.ALFRED_API_HOST, port: options.port ?? gateway.ALFRED_API_PORT });
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : gateway.ALFRED_API_PORT;
    const host = gateway.ALFRED_API_HOST.includes(':') ? `[${gateway.ALFRED_API_HOST}]` : gateway.ALFRED_API_HOST;
    return {
      bus,
      app,
      services,
      url: `http://${host}:${port}`,
      async stop() {
        await app.close();
        for (const s of [...services].reverse()) await s.stop();
        await bus.close();
      },
    };
  } catch (err) {
    for (const s of [...services].reverse()) await s.stop().catch(() => undefined);
    await bus.close().catch(() => undefined);
    throw err;
  }
}
