import {
  SKILL_EXECUTION_STREAM,
  SkillExecutionEvent,
  SkillExecutionRecorded,
  type Scope,
  type SkillExecutionList,
  type SkillExecutionsQuery,
} from '#contracts';
import type { Bus } from '#bus';

/** The audit trail of executions: a JetStream stream in NATS mode, an fsynced log in-process. */
export class ExecutionLog {
  constructor(private readonly bus: Bus) {}

  record(event: SkillExecutionEvent): Promise<void> {
    return this.bus.publish(SkillExecutionRecorded, event, { key: event.skillId, msgId: event.executionId });
  }

  /** A tenant's executions of one skill, newest first. */
  async list(scope: Scope, id: string, query: SkillExecutionsQuery): Promise<SkillExecutionList> {
    const mine: SkillExecutionEvent[] = [];
    for await (const e of this.bus.readEvents(SKILL_EXECUTION_STREAM, `${SkillExecutionRecorded.subject}.${id}`)) {
      const parsed = SkillExecutionEvent.safeParse(e.payload);
      if (parsed.success && parsed.data.caller.tenant === scope.tenant) mine.push(parsed.data);
    }
    mine.reverse();
    return { skill_id: id, executions: mine.slice(query.offset, query.offset + query.limit), total: mine.length, limit: query.limit, offset: query.offset };
  }
}
