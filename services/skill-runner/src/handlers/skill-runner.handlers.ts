import { Inject, Injectable } from '@nestjs/common';
import { SkillRunnerRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { ExecutionLog } from '../execution-log.js';
import { SkillExecutionService } from '../skill-execution.service.js';

/** Executions on the skill-runner queue group: any instance takes any request. */
@Injectable()
export class SkillRunnerHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly executions: SkillExecutionService,
    private readonly log: ExecutionLog,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(SkillRunnerRoutes.execute, (p, ctx) => this.executions.execute(p, ctx));
    this.handle(SkillRunnerRoutes.executions, (p) => this.log.list(p.scope, p.id, p.query));
  }
}
