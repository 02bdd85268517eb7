import { Inject, Injectable } from '@nestjs/common';
import { SkillRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { SkillRegistryService } from '../skill-registry.service.js';

/** Skill-registry operations on the bus: parse (done by the adapter), call the logic, answer. */
@Injectable()
export class SkillRegistryHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly registry: SkillRegistryService,
  ) {
    super(bus);
  }

  protected register(): void {
    const r = this.registry;
    this.handle(SkillRoutes.index, (p) => r.index(p.tenant, p.budget, p.only));
    this.handle(SkillRoutes.get, (p) => r.get(p.tenant, p.name));
    this.handle(SkillRoutes.resources, (p) => r.resources(p.tenant, p.name));
    this.handle(SkillRoutes.resource, (p) => r.resource(p.tenant, p.name, p.path));
    this.handle(SkillRoutes.search, (p) => r.searchSkills(p.tenant, p.query));
    this.handle(SkillRoutes.reload, (p) => r.reload(p.tenant));
    this.handle(SkillRoutes.create, (p) => r.create(p.tenant, p.skill));
    this.handle(SkillRoutes.feedback, (p) => r.feedback(p.tenant, p.name, p.feedback));
  }
}
