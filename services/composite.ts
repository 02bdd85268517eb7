import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { deleteStreamsWithPrefix, InProcessBus, NatsBus, type Bus } from '#bus';
import { busSettings } from '#config';
import type { Logger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { ALL_SERVICES } from './all-services.js';
import type { GatewayConfig } from './gateway/src/config.js';
import { createGatewayApp } from './gateway/src/gateway.module.js';

/** Every service and the gateway running in this process. */
export interface RunningAlfred {
  readonly app: NestFastifyApplication;
  readonly services: readonly HostedService[];
  /** The base URL the gateway listens on. */
  readonly url: string;
  stop(): Promise<void>;
}

export interface CompositeOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly gateway: GatewayConfig;
  readonly logger: Logger;
  /** Overrides ALFRED_API_PORT (0 picks a free port). */
  readonly port?: number;
  /** The bus each service (and `gateway`) uses: one shared in-process bus, or a connection each. */
  readonly busFor: (name: string) => Promise<Bus>;
}

/** Hosts every service and then the gateway, each on the bus `busFor` gives it. */
export async function startComposite(options: CompositeOptions): Promise<RunningAlfred> {
  const { gateway, logger } = options;
  const buses = new Set<Bus>();
  const services: HostedService[] = [];
  const busFor = async (name: string) => {
    const bus = await options.busFor(name);
    buses.add(bus);
    return bus;
  };
  const stopAll = async () => {
    for (const s of [...services].reverse())
      await s.stop().catch((err: unknown) => logger.error({ err }, 'stop failed'));
    for (const b of buses) await b.close().catch(() => undefined);
  };
  let listening: string | undefined;
  const apiUrl = () => listening;
  try {
    for (const def of ALL_SERVICES) {
      const config = def.loadConfig(options.env);
      const ctx = {
        service: def.name,
        instance: `${def.name}-${process.pid}`,
        bus: await busFor(def.name),
        logger: logger.child({ component: def.name }),
        apiUrl,
      };
      services.push(await hostService(def, config, ctx));
    }
    const app = await createGatewayApp(gateway, {
      bus: await busFor('gateway'),
      logger: logger.child({ component: 'gateway' }),
    });
    await app.listen({ host: gateway.ALFRED_API_HOST, port: options.port ?? gateway.ALFRED_API_PORT });
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : gateway.ALFRED_API_PORT;
    const url = `http://${hostOf(gateway.ALFRED_API_HOST)}:${port}`;
    listening = `http://${hostOf(reachableHost(gateway.ALFRED_API_HOST))}:${port}`;
    return {
      app,
      services,
      url,
      async stop() {
        await app.close();
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

const hostOf = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The address a local client reaches a server bound to `host` at: a wildcard bind answers on loopback. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

/** `npm start`'s shape: one in-process bus whose event logs live under the data dir. */
export function startEmbedded(options: Omit<CompositeOptions, 'busFor'>): Promise<RunningAlfred> {
  const { eventsMaxAgeMs, defaultTimeoutMs } = busSettings(options.gateway);
  const bus = new InProcessBus({
    dataDir: join(options.gateway.ALFRED_DATA_DIR, 'bus'),
    defaultTimeoutMs,
    eventsMaxAgeMs,
    logger: options.logger,
  });
  return startComposite({ ...options, busFor: async () => bus });
}

/**
 * Every service on its own NATS connection in this process: the distributed wiring, for tests and benchmarks.
 * With `ephemeral`, stopping also deletes the JetStream streams created under the subject prefix.
 */
export async function startOverNats(
  options: Omit<CompositeOptions, 'busFor'> & { natsUrl: string; subjectPrefix?: string; ephemeral?: boolean },
): Promise<RunningAlfred> {
  const running = await startComposite({
    ...options,
    busFor: (name) =>
      NatsBus.connect({
        ...busSettings(options.gateway),
        url: options.natsUrl,
        name: `alfred-${name}-${process.pid}`,
        subjectPrefix: options.subjectPrefix,
        logger: options.logger,
      }),
  });
  const { subjectPrefix } = options;
  if (!options.ephemeral || !subjectPrefix) return running;
  return {
    ...running,
    async stop() {
      await running.stop();
      await deleteStreamsWithPrefix(options.natsUrl, subjectPrefix);
    },
  };
}
