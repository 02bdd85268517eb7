import {
  ExecutableSkillRoutes,
  SKILL_EXECUTE_BUS_TIMEOUT_MS,
  SkillCaller,
  SkillRunnerRoutes,
  skillToolName,
  type ExecutableSkillInfo,
  type RequestOf,
  type ScopedWriter,
} from '#contracts';
import type { Bus } from '#bus';
import { isAlfredError } from '#errors';
import { isManagementTool, MANAGEMENT_TOOLS, type ManagementToolName } from './management-tools.js';
import type { ToolCallResult, ToolDefinition } from './tool-definition.js';

/** The executable-skill tools of one agent turn: definitions for the model and the executor of its calls. */
export interface ExecutableSkillTools {
  /**
   * The management tools, then every loaded executable skill as `skill_<id>` (a name taken by a management tool is left
   * out).
   */
  definitions(tenant: string): Promise<ToolDefinition[]>;
  /**
   * Runs one tool call over the bus; failures (bad input, a failed skill, a missing service) come back as error
   * results. `writer` is recorded as the provenance of a skill that skill_create / skill_update writes.
   */
  call(name: string, input: unknown, caller: SkillCaller, writer?: ScopedWriter): Promise<ToolCallResult>;
}

/** Executable skills as agent tools, served by the skill-registry and the skill-runner queue group. */
export function executableSkillTools(bus: Bus): ExecutableSkillTools {
  return {
    async definitions(tenant) {
      const { skills } = await bus.request(ExecutableSkillRoutes.list, { tenant });
      return [...Object.values(MANAGEMENT_TOOLS), ...skills.filter(isOfferable).map(skillDefinition)];
    },
    async call(name, input, caller, writer) {
      try {
        const who = SkillCaller.parse(caller);
        const args =
          input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
        if (isManagementTool(name)) return await manage(bus, name, args, who, writer);
        if (!name.startsWith('skill_')) return failure(`unknown tool ${name}`);
        const id = name.slice('skill_'.length).replaceAll('_', '-');
        const run = await bus.request(
          SkillRunnerRoutes.execute,
          { id, args, caller: who },
          { timeoutMs: SKILL_EXECUTE_BUS_TIMEOUT_MS, ...context(who) },
        );
        const answer = {
          success: run.success,
          ...(run.result === undefined ? {} : { result: run.result }),
          ...(run.error ? { error: run.error } : {}),
        };
        return { content: JSON.stringify(answer), isError: !run.success, data: run };
      } catch (err) {
        return failure(describe(err), isAlfredError(err) ? err.details : undefined);
      }
    },
  };
}

/** `skill_<id>` for a loaded skill: its description and the JSON schema of its parameters. */
export function skillDefinition(skill: ExecutableSkillInfo): ToolDefinition {
  return {
    name: skill.tool_name ?? skillToolName(skill.id),
    description: skill.description ?? skill.id,
    input_schema: skill.input_schema ?? { type: 'object', properties: {}, additionalProperties: false },
  };
}

function isOfferable(skill: ExecutableSkillInfo): boolean {
  return skill.status === 'loaded' && !isManagementTool(skill.tool_name ?? skillToolName(skill.id));
}

async function manage(
  bus: Bus,
  name: ManagementToolName,
  input: Record<string, unknown>,
  caller: SkillCaller,
  writer?: ScopedWriter,
): Promise<ToolCallResult> {
  const ctx = context(caller);
  const by = writer ? { writer } : {};
  const { id, ...rest } = input;
  switch (name) {
    case 'skill_list': {
      const { skills } = await bus.request(ExecutableSkillRoutes.list, { tenant: caller.tenant }, ctx);
      const brief = skills.map((s) => ({
        id: s.id,
        status: s.status,
        ...(s.reason ? { reason: s.reason } : {}),
        version: s.version,
        tool: s.tool_name,
        description: s.description,
      }));
      return success(brief);
    }
    case 'skill_create':
      // The definitions of create, update and delete ask the runtime to confirm with the user before this call is made.
      return success(
        summary(
          await bus.request(
            ExecutableSkillRoutes.create,
            {
              scope: { tenant: caller.tenant, agent: caller.agent },
              body: input as RequestOf<typeof ExecutableSkillRoutes.create>['body'],
              origin: AGENT_CONSENTED,
              ...by,
            },
            ctx,
          ),
        ),
      );
    case 'skill_update':
      return success(
        summary(
          await bus.request(
            ExecutableSkillRoutes.update,
            { tenant: caller.tenant, id: String(id), patch: rest, origin: AGENT_CONSENTED, ...by },
            ctx,
          ),
        ),
      );
    case 'skill_delete':
      return success(
        await bus.request(ExecutableSkillRoutes.delete, { tenant: caller.tenant, id: String(id), confirm: true }, ctx),
      );
    case 'skill_reload':
      return success(await bus.request(ExecutableSkillRoutes.reload, { tenant: caller.tenant }, ctx));
  }
}

/** Management calls reach the registry only after the user said yes (the tool definitions require confirmation). */
const AGENT_CONSENTED = { by: 'agent', consented: true } as const;

function summary(skill: ExecutableSkillInfo) {
  return {
    id: skill.id,
    status: skill.status,
    version: skill.version,
    digest: skill.digest,
    tool: skill.tool_name,
    ...(skill.reason ? { reason: skill.reason } : {}),
  };
}

const context = (caller: SkillCaller) =>
  caller.correlationId ? { context: { correlationId: caller.correlationId } } : {};
const success = (data: unknown): ToolCallResult => ({ content: JSON.stringify(data), isError: false, data });

function failure(message: string, details?: unknown): ToolCallResult {
  const issues = (details as { issues?: Array<{ path: string; message: string }> } | undefined)?.issues;
  const why = issues?.length
    ? `${message} (${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')})`
    : message;
  return { content: why, isError: true, ...(details === undefined ? {} : { data: details }) };
}

function describe(err: unknown): string {
  if (isAlfredError(err)) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
