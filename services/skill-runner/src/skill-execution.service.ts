import { Metrics } from '#metrics';
import {
  ErrorCode,
  ExecutableSkillRoutes,
  SkillRoutes,
  type ParsedRequestOf,
  type SkillExecuteResponse,
  type SkillRunnerRoutes,
} from '#contracts';
import type { Bus, MessageContext } from '#bus';
import type { Logger } from '#logging';
import { AlfredError, isAlfredError } from '#errors';
import type { FairSlots } from '#runtime';
import type { SkillRunner } from '#sandbox';
import type { ExecutionLog } from './execution-log.js';
import type { CachedSkill, SkillFilesCache } from './skill-files.cache.js';

type ExecuteRequest = ParsedRequestOf<typeof SkillRunnerRoutes.execute>;

/** One execution: find the current version, get its files, run it sandboxed, record it, answer. */
export class SkillExecutionService {
  /** Outcomes still being counted: the answer does not wait for them, a graceful stop does. */
  private readonly counting = new Set<Promise<void>>();

  constructor(
    private readonly bus: Bus,
    private readonly cache: SkillFilesCache,
    private readonly runner: SkillRunner,
    private readonly log: ExecutionLog,
    private readonly instance: string,
    private readonly slots: FairSlots,
    private readonly logger?: Logger,
  ) {}

  async execute(request: ExecuteRequest, ctx: MessageContext): Promise<SkillExecuteResponse> {
    const skill = await this.current(request.caller.tenant, request.id, ctx);
    const caller = { ...request.caller, correlationId: request.caller.correlationId ?? ctx.correlationId };
    // Throws VALIDATION_FAILED with field details before anything runs (and nothing is recorded). Tenants take turns
    // for this runner's slots, none holding more than its share.
    const { result, record } = await this.slots.run(caller.tenant, () =>
      this.runner.execute(skill.dir, skill.manifest, request.args, caller),
    );
    await this.log.record({ ...record, runner: this.instance });
    Metrics.sandboxExecutions.inc({ kind: 'skill', outcome: record.outcome });
    Metrics.sandboxDuration.observe({ kind: 'skill' }, record.durationMs / 1000);
    // Counted after answering: a count is a read and a durable write in the registry (~20 ms embedded, measured),
    // four times a warm run's own time, and ranking does not need it before the caller has its result.
    const counted = this.countOutcome(caller.tenant, record.skillId, record.outcome === 'succeeded', ctx).finally(() =>
      this.counting.delete(counted),
    );
    this.counting.add(counted);
    return {
      ...result,
      execution_id: record.executionId,
      duration_ms: record.durationMs,
      outcome: record.outcome,
      skill_id: record.skillId,
      version: record.version,
      digest: record.digest,
      runner: this.instance,
    };
  }

  /**
   * Waits for the outcomes still being counted. Nest calls it once the handlers have drained (so no run adds one
   * after), and the host closes the bus only after it.
   */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.counting]);
  }

  /**
   * Every run is an outcome of the skill (success only when it `succeeded`), counted where skill feedback is, so
   * skill search and the index rank by it. The audit record is already durable: a registry that cannot count it
   * now costs one outcome, never the caller's answer nor its time.
   */
  private async countOutcome(tenant: string, id: string, success: boolean, ctx: MessageContext): Promise<void> {
    try {
      await this.bus.request(SkillRoutes.executed, { tenant, id, success }, { context: ctx });
    } catch (err) {
      this.logger?.warn(
        { err: String(err), skill: id, correlationId: ctx.correlationId },
        'the outcome of a skill execution was not counted',
      );
    }
  }

  /** The version the registry serves now; one retry covers a skill updated between resolving and fetching. */
  private async current(tenant: string, id: string, ctx: MessageContext, retried = false): Promise<CachedSkill> {
    const resolved = await this.bus.request(ExecutableSkillRoutes.resolve, { tenant, id }, { context: ctx });
    if (resolved.status !== 'loaded') {
      throw new AlfredError(ErrorCode.Conflict, `skill ${id} is invalid and cannot run: ${resolved.reason}`, {
        id,
        reason: resolved.reason,
      });
    }
    try {
      return await this.cache.get(tenant, id, resolved.digest, ctx);
    } catch (err) {
      if (!retried && isAlfredError(err) && err.code === ErrorCode.Conflict) return this.current(tenant, id, ctx, true);
      throw err;
    }
  }
}
