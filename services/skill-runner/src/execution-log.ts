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
    const page = mine.slice(query.offset, query.offset + query.limit).map(brief);
    return { skill_id: id, executions: page, total: mine.length, limit: query.limit, offset: query.offset };
  }
}

/** Per stream in a listed record: a page of 100 records stays well under NATS' 1 MiB message limit. */
const LISTED_OUTPUT_CHARS = 2048;

function brief(e: SkillExecutionEvent): SkillExecutionEvent {
  const cut = (text: string) =>
    text.length > LISTED_OUTPUT_CHARS ? `${text.slice(0, LISTED_OUTPUT_CHARS)}\n…[cut in the listing]` : text;
  const logs: string[] = [];
  let used = 0;
  for (const line of e.logs) {
    if ((used += line.length) > LISTED_OUTPUT_CHARS) break;
    logs.push(line);
  }
  const cutAny =
    logs.length < e.logs.length || e.stdout.length > LISTED_OUTPUT_CHARS || e.stderr.length > LISTED_OUTPUT_CHARS;
  return { ...e, stdout: cut(e.stdout), stderr: cut(e.stderr), logs, outputTruncated: e.outputTruncated || cutAny };
}
