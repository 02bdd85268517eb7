import { Inject, Injectable } from '@nestjs/common';
import { SkillInstallRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { SkillRegistryService } from '../skill-registry.service.js';
import { SkillInstallService } from './skill-install.service.js';

/**
 * Installs from git on the bus: replies and errors name skill folders by their public paths, as every registry reply.
 */
@Injectable()
export class SkillInstallHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly installs: SkillInstallService,
    private readonly registry: SkillRegistryService,
  ) {
    super(bus);
  }

  protected register(): void {
    const s = this.installs;
    const as = <T>(tenant: string, work: () => Promise<T>) => this.registry.pathsOf(tenant).expose(work);
    this.handle(SkillInstallRoutes.install, (p) => as(p.tenant, () => s.install(p.tenant, p.body, p.writer)));
    this.handle(SkillInstallRoutes.update, (p) => {
      const target = {
        overwrite: p.overwrite,
        ...(p.name === undefined ? {} : { name: p.name }),
        ...(p.source === undefined ? {} : { source: p.source }),
      };
      return as(p.tenant, () => s.update(p.tenant, target, p.writer));
    });
    this.handle(SkillInstallRoutes.delete, (p) => as(p.tenant, () => s.remove(p.tenant, p.name, p.confirm)));
  }
}
