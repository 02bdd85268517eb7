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
    this.handle(ExecutableSkillRoutes.list, async () => ({ skills: c.list() }));
    this.handle(ExecutableSkillRoutes.get, async (p) => c.get(p.id));
    this.handle(ExecutableSkillRoutes.create, (p) => c.create(p.scope, p.body));
    this.handle(ExecutableSkillRoutes.update, (p) => c.update(p.id, p.patch));
    this.handle(ExecutableSkillRoutes.delete, (p) => c.delete(p.id, p.confirm));
    this.handle(ExecutableSkillRoutes.reload, () => c.reload());
    this.handle(ExecutableSkillRoutes.resolve, async (p) => c.resolve(p.id));
    this.handle(ExecutableSkillRoutes.files, async (p) => c.files(p.id, p.digest));
  }
}
