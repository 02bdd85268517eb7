import 'reflect-metadata';
import { Global, Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { z } from 'zod';
import { healthRoute, type ServiceName } from '#contracts';
import { BUS, type Bus, type Served } from '#bus';
import { LOGGER, PinoNestLogger, type Logger } from '#logging';
import { readiness, redisReadiness, type ReadinessCheck } from './health.js';

/** What every service instance gets from its host, in both ways Alfred runs. */
export interface ServiceContext {
  readonly service: ServiceName;
  readonly instance: string;
  readonly bus: Bus;
  readonly logger: Logger;
  /**
   * The gateway's real base URL when the gateway runs in this process (the composite sets it once it listens,
   * so a port chosen at bind time is known); undefined in a service running on its own.
   */
  readonly apiUrl?: () => string | undefined;
}

export const SERVICE_CONTEXT = Symbol('SERVICE_CONTEXT');

/** A service as the hosts see it: its name, its parsed config, and the Nest module that implements it. */
export interface ServiceDefinition<C = unknown> {
  readonly name: ServiceName;
  /** The environment variables it reads, keyed by name (docker-compose is checked against these). */
  readonly envSchema: z.ZodObject;
  readonly loadConfig: (env: NodeJS.ProcessEnv) => C;
  readonly module: (config: C) => DynamicModule;
  /** Checks that must pass before the instance reports ready; resolved from its application context. */
  readonly readiness?: (app: INestApplicationContext) => ReadinessCheck[];
  /** Facts its health answer carries beside the checks (e.g. whether a model is configured). */
  readonly info?: (app: INestApplicationContext) => Record<string, unknown>;
}

@Global()
@Module({})
class CoreModule {
  static forRoot(ctx: ServiceContext): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: SERVICE_CONTEXT, useValue: ctx },
        { provide: BUS, useValue: ctx.bus },
        { provide: LOGGER, useValue: ctx.logger },
      ],
      exports: [SERVICE_CONTEXT, BUS, LOGGER],
    };
  }
}

/** A running service instance: its Nest context and its health responder. */
export interface HostedService {
  readonly name: ServiceName;
  readonly app: INestApplicationContext;
  ready(): Promise<{ ready: boolean; checks: Record<string, boolean> }>;
  stop(): Promise<void>;
}

/** Boots one service on a bus: Nest context, bus handlers, and the service's health subject. */
export async function hostService<C>(
  def: ServiceDefinition<C>,
  config: C,
  ctx: ServiceContext,
): Promise<HostedService> {
  const root = { module: class HostRoot {}, imports: [CoreModule.forRoot(ctx), def.module(config)] };
  const app = await NestFactory.createApplicationContext(root, {
    logger: new PinoNestLogger(ctx.logger),
    abortOnError: false,
  });
  await app.init();
  const checks: ReadinessCheck[] = [
    { name: 'bus', check: () => ctx.bus.connectionState() === 'connected' },
    redisReadiness,
    ...(def.readiness?.(app) ?? []),
  ];
  const ready = () => readiness(checks);
  const health: Served = ctx.bus.serve(healthRoute(def.name), async () => {
    const r = await ready();
    return { service: def.name, instance: ctx.instance, ready: r.ready, details: { ...r.checks, ...def.info?.(app) } };
  });
  // "Started" means other connections can reach the handlers: the server has every subscription.
  await ctx.bus.flush();
  ctx.logger.info('service started');
  return {
    name: def.name,
    app,
    ready,
    async stop() {
      await health.drain();
      await app.close();
      ctx.logger.info('service stopped');
    },
  };
}
