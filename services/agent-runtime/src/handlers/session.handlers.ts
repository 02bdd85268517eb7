import { Inject, Injectable } from '@nestjs/common';
import { SessionRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { BusHandlers } from '#runtime';
import type { SessionStore } from '#sessions';

export const SESSION_STORE = Symbol('SESSION_STORE');

/** Sessions on the bus: every agent-runtime instance serves any session (state lives in the store). */
@Injectable()
export class SessionHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(SESSION_STORE) private readonly store: SessionStore,
  ) {
    super(bus);
  }

  protected register(): void {
    const s = this.store;
    this.handle(SessionRoutes.create, (p) => s.create(p.scope, { metadata: p.metadata }));
    this.handle(SessionRoutes.get, (p) => s.get(p.scope, p.id));
    this.handle(SessionRoutes.append, (p) => s.append(p.scope, p.id, p.messages));
    this.handle(SessionRoutes.list, (p) => s.list(p.scope, { limit: p.limit, offset: p.offset }));
    this.handle(SessionRoutes.delete, async (p) => {
      if (!(await s.delete(p.scope, p.id))) throw AlfredError.notFound('session', p.id);
      return { id: p.id, deleted: true as const };
    });
  }
}
