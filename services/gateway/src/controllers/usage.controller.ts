import { Controller, Get, Inject } from '@nestjs/common';
import { ErrorCode, UsageRoutes, type TenantUsage } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { AgentNotScoped } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';

/**
 * What the caller's tenant holds on disk against its quotas: agent workspaces (agent-runtime) and skill data
 * (skill-runner).
 */
@AgentNotScoped()
@Controller('usage')
export class UsageController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  async usage(@CallerParam() c: Caller): Promise<TenantUsage> {
    const tenant = { tenant: c.scope.tenant };
    const [workspaces, skillData] = await Promise.all([
      orNull(this.bus.request(UsageRoutes.workspaces, tenant, { context: c.context })),
      orNull(this.bus.request(UsageRoutes.skillData, tenant, { context: c.context })),
    ]);
    return { tenant: c.scope.tenant, workspaces, skill_data: skillData };
  }
}

/** A deployment without that service (no skill-runner) has nothing of that kind to report. */
async function orNull<T>(answer: Promise<T>): Promise<T | null> {
  try {
    return await answer;
  } catch (err) {
    if (err instanceof AlfredError && err.code === ErrorCode.ServiceUnavailable) return null;
    throw err;
  }
}
