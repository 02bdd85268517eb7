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
    this.handle(SkillRoutes.index, async (p) => r.index(p.budget, p.only));
    this.handle(SkillRoutes.get, async (p) => r.get(p.name));
    this.handle(SkillRoutes.resources, (p) => r.resources(p.name));
    this.handle(SkillRoutes.resource, (p) => r.resource(p.name, p.path));
    this.handle(SkillRoutes.search, (p) => r.searchSkills(p.query));
    this.handle(SkillRoutes.reload, () => r.reload());
    this.handle(SkillRoutes.create, (p) => r.create(p.skill));
  }
}
