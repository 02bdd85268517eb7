import { Inject, Injectable } from '@nestjs/common';
import { ExecutableSkillRoutes, hasWriterFilter, type ExecutableSkillInfo } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { SkillOutcomeRepository } from '../outcomes/skill-outcome.repository.js';
import { SkillProvenanceRepository } from '../records/skill-provenance.repository.js';
import { InstallRecordsRepository } from '../install/install-records.repository.js';
import { SkillInstallService } from '../install/skill-install.service.js';
import { ExecutableSkillCatalog } from './executable-skill.catalog.js';

/**
 * Executable-skill management and file delivery on the bus; reads carry who wrote a skill and what its runs achieved.
 */
@Injectable()
export class ExecutableSkillsHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly catalog: ExecutableSkillCatalog,
    private readonly provenance: SkillProvenanceRepository,
    private readonly outcomes: SkillOutcomeRepository,
    private readonly installs: SkillInstallService,
    private readonly records: InstallRecordsRepository,
  ) {
    super(bus);
  }

  protected register(): void {
    const c = this.catalog;
    const pv = this.provenance;
    this.handle(ExecutableSkillRoutes.list, async (p) => {
      const all = c.list(p.tenant);
      const writtenBy = hasWriterFilter(p.written) ? await pv.matching(p.tenant, 'executable', p.written) : undefined;
      return {
        skills: await this.shown(
          p.tenant,
          writtenBy ? all.filter((s) => s.source === 'managed' && writtenBy.has(s.id)) : all,
        ),
      };
    });
    this.handle(ExecutableSkillRoutes.get, async (p) => (await this.shown(p.tenant, [c.get(p.tenant, p.id)]))[0]!);
    this.handle(ExecutableSkillRoutes.create, async (p) => {
      const id = typeof p.body.id === 'string' ? p.body.id : undefined;
      return this.one(
        p.scope.tenant,
        await pv.around(p.scope.tenant, 'executable', id, p.writer, () => c.create(p.scope, p.body, p.origin)),
      );
    });
    this.handle(ExecutableSkillRoutes.update, async (p) =>
      this.one(
        p.tenant,
        await pv.around(p.tenant, 'executable', p.id, p.writer, () => c.update(p.tenant, p.id, p.patch, p.origin)),
      ),
    );
    this.handle(ExecutableSkillRoutes.delete, async (p) => {
      const deleted = await c.delete(p.tenant, p.id, p.confirm);
      await pv.forget(p.tenant, 'executable', p.id);
      await this.installs.forgetExecutable(p.tenant, p.id);
      return deleted;
    });
    this.handle(ExecutableSkillRoutes.consent, async (p) =>
      this.one(p.tenant, await c.consent(p.tenant, p.id, p.digest)),
    );
    this.handle(ExecutableSkillRoutes.reload, (p) => c.reload(p.tenant));
    this.handle(ExecutableSkillRoutes.resolve, async (p) => c.resolve(p.tenant, p.id));
    this.handle(ExecutableSkillRoutes.files, async (p) => c.files(p.tenant, p.id, p.digest));
  }

  private async one<T extends ExecutableSkillInfo>(tenant: string, skill: T): Promise<T> {
    return (await this.shown(tenant, [skill]))[0]!;
  }

  /**
   * Managed skills with their `provenance` (and `installed_from`); every skill with the `outcomes` its runs recorded.
   */
  private async shown<T extends ExecutableSkillInfo>(tenant: string, skills: readonly T[]): Promise<T[]> {
    const managed = await this.provenance.decorate(
      tenant,
      'executable',
      skills.filter((s) => s.source === 'managed'),
      (s) => s.id,
    );
    const written = new Map(managed.map((s) => [s.id, s]));
    const outcomes = await this.outcomes.getMany(
      tenant,
      skills.map((s) => s.id),
    );
    const installed = await this.records.all(tenant);
    return skills.map((one) => {
      const s = written.get(one.id) ?? one;
      const o = outcomes.get(s.id);
      const from = s.source === 'managed' ? installed.get(s.id) : undefined;
      return {
        ...s,
        ...(o ? { outcomes: o } : {}),
        ...(from?.kinds.includes('executable') ? { installed_from: from } : {}),
      };
    });
  }
}
