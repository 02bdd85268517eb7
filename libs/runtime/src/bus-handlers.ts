import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import type { Route } from '#contracts';
import type { Bus, Handler, Served } from '#bus';

/**
 * Base of every service's bus entry points: `register()` names the routes it serves; they start when
 * the application boots and drain (finishing in-flight requests) before it shuts down.
 */
export abstract class BusHandlers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly served: Served[] = [];

  protected constructor(protected readonly bus: Bus) {}

  protected abstract register(): void;

  protected handle<R extends Route>(route: R, handler: Handler<R>): void {
    this.served.push(this.bus.serve(route, handler));
  }

  onApplicationBootstrap(): void {
    this.register();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.served.splice(0).map((s) => s.drain()));
  }
}
