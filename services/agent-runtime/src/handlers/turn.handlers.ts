import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { TurnRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { TurnCoordinator } from '../turns/turn-coordinator.js';

/** Turns on the bus: start (queue group: any worker), cancel and confirm (any worker; the owner is told). */
@Injectable()
export class TurnHandlers extends BusHandlers implements OnApplicationBootstrap {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(TurnCoordinator) private readonly turns: TurnCoordinator,
  ) {
    super(bus);
  }

  protected register(): void {
    const t = this.turns;
    this.handle(TurnRoutes.start, (p) =>
      t.start({
        scope: p.scope,
        sessionId: p.session_id,
        turnId: p.turn_id,
        message: p.message,
        ...(p.credential ? { apiKey: p.credential } : {}),
      }),
    );
    this.handle(TurnRoutes.cancel, (p) => t.cancel(p.scope, p.session_id));
    this.handle(TurnRoutes.confirm, (p) => t.confirm(p.scope, p.session_id, p.request_id, p.approve));
  }

  override async onApplicationBootstrap(): Promise<void> {
    await this.turns.listen();
    super.onApplicationBootstrap();
  }

  override async beforeApplicationShutdown(): Promise<void> {
    await super.beforeApplicationShutdown();
    await this.turns.shutdown();
  }
}
