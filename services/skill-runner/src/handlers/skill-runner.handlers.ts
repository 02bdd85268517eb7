import { Inject, Injectable } from '@nestjs/common';
import { SkillRunnerRoutes, UsageRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { SkillRunner } from '#sandbox';
import { ExecutionLog } from '../execution-log.js';
import { SkillExecutionService } from '../skill-execution.service.js';

/** Executions on the skill-runner queue group: any instance takes any request. */
@Injectable()
export class SkillRunnerHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly executions: SkillExecutionService,
    private readonly log: ExecutionLog,
    private readonly runner: SkillRunner,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(SkillRunnerRoutes.execute, (p, ctx) => this.executions.execute(p, ctx));
    this.handle(SkillRunnerRoutes.executions, (p) => this.log.list(p.scope, p.id, p.query));
    this.handle(UsageRoutes.skillData, async (p) => {
      const state = (await this.runner.dataUsage(p.tenant))!;
      return { used_bytes: state.tenant.used, quota_bytes: state.tenant.quota };
    });
  }
}
