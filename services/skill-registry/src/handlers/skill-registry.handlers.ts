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
    // Every reply and error leaves with public paths (/skills/<source>/…), never the server's folders.
    const as = <T>(tenant: string, work: () => Promise<T>) => r.pathsOf(tenant).expose(work);
    this.handle(SkillRoutes.index, (p) =>
      as(p.tenant, () => r.index(p.tenant, p.budget, p.only, p.written, p.installed_from)),
    );
    this.handle(SkillRoutes.get, (p) => as(p.tenant, () => r.get(p.tenant, p.name)));
    this.handle(SkillRoutes.resources, (p) => as(p.tenant, () => r.resources(p.tenant, p.name)));
    this.handle(SkillRoutes.resource, (p) => as(p.tenant, () => r.resource(p.tenant, p.name, p.path)));
    this.handle(SkillRoutes.search, (p) => as(p.tenant, () => r.searchSkills(p.tenant, p.query)));
    this.handle(SkillRoutes.reload, (p) => as(p.tenant, () => r.reload(p.tenant)));
    this.handle(SkillRoutes.create, (p) => as(p.tenant, () => r.create(p.tenant, p.skill, p.writer)));
    this.handle(SkillRoutes.feedback, (p) => as(p.tenant, () => r.feedback(p.tenant, p.name, p.feedback)));
    this.handle(SkillRoutes.executed, (p) => r.executed(p.tenant, p.id, p.success));
  }
}
