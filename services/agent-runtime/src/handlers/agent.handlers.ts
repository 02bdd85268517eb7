import { Inject, Injectable } from '@nestjs/common';
import { AgentRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { AgentService } from '../agents/agent.service.js';

/** Named agents on the bus. */
@Injectable()
export class AgentHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(AgentService) private readonly agents: AgentService,
  ) {
    super(bus);
  }

  protected register(): void {
    const a = this.agents;
    this.handle(AgentRoutes.create, (p) => a.create(p.tenant, p.agent));
    this.handle(AgentRoutes.list, (p) => a.list(p.tenant));
    this.handle(AgentRoutes.get, (p) => a.get(p.scope));
    this.handle(AgentRoutes.patch, (p) => a.patch(p.scope, p.patch));
    this.handle(AgentRoutes.delete, (p) => a.delete(p.scope, p.confirm));
  }
}
