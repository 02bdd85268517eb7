import { Inject, Injectable } from '@nestjs/common';
import { ExecutableSkillRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { ExecutableSkillCatalog } from './executable-skill.catalog.js';

/** Executable-skill management and file delivery on the bus. */
@Injectable()
export class ExecutableSkillsHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly catalog: ExecutableSkillCatalog,
  ) {
    super(bus);
  }

  protected register(): void {
    const c = this.catalog;
    this.handle(ExecutableSkillRoutes.list, async (p) => ({ skills: c.list(p.tenant) }));
    this.handle(ExecutableSkillRoutes.get, async (p) => c.get(p.tenant, p.id));
    this.handle(ExecutableSkillRoutes.create, (p) => c.create(p.scope, p.body, p.origin));
    this.handle(ExecutableSkillRoutes.update, (p) => c.update(p.tenant, p.id, p.patch, p.origin));
    this.handle(ExecutableSkillRoutes.delete, (p) => c.delete(p.tenant, p.id, p.confirm));
    this.handle(ExecutableSkillRoutes.reload, (p) => c.reload(p.tenant));
    this.handle(ExecutableSkillRoutes.resolve, async (p) => c.resolve(p.tenant, p.id));
    this.handle(ExecutableSkillRoutes.files, async (p) => c.files(p.tenant, p.id, p.digest));
  }
}
