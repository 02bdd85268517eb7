import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { AgentName, UsageRoutes, type WorkspacesUsage } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import type { DiskQuota } from '#sandbox';
import { safeSegment } from '#sessions';

export const WORKSPACE_QUOTA = Symbol('WORKSPACE_QUOTA');
export const WORKSPACES_DIR = Symbol('WORKSPACES_DIR');

/** A tenant's workspaces on disk against their quotas (walked now: `GET /usage` is for people, not hot paths). */
@Injectable()
export class UsageHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    @Inject(WORKSPACE_QUOTA) private readonly quota: DiskQuota,
    @Inject(WORKSPACES_DIR) private readonly workspacesDir: string,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(UsageRoutes.workspaces, (p) => this.usage(p.tenant));
  }

  private async usage(tenant: string): Promise<WorkspacesUsage> {
    const tenantDir = path.join(path.resolve(this.workspacesDir), safeSegment(tenant));
    const names = (await readdir(tenantDir).catch(() => [] as string[]))
      .filter((name) => AgentName.safeParse(name).success)
      .sort();
    const agents: WorkspacesUsage['agents'] = [];
    for (const agent of names) {
      const state = await this.quota.state(tenantDir, path.join(tenantDir, agent));
      agents.push({ agent, used_bytes: state.folder.used, quota_bytes: state.folder.quota });
    }
    const total = await this.quota.state(tenantDir);
    return { used_bytes: total.tenant.used, quota_bytes: total.tenant.quota, agents };
  }
}
