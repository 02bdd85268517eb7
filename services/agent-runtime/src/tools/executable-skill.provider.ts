import { executableSkillTools, type ExecutableSkillTools, type ToolDefinition } from '#agent-tools';
import type { Bus } from '#bus';
import type { Logger } from '#logging';
import type { AgentTool, ToolProvider } from './tool.types.js';
import { failed } from './tool.types.js';
import { TtlCache } from '../turns/ttl-cache.js';

/**
 * Executable skills (skill.json + execute.ts, run by the skill-runner) as `skill_<id>` tools of every turn, plus
 * their management tools. A call whose definition requires confirmation asks the user first. When the registry
 * does not answer, the turn simply has no executable-skill tools.
 */
export class ExecutableSkillToolProvider implements ToolProvider {
  private readonly executable: ExecutableSkillTools;
  private readonly definitions: TtlCache<ToolDefinition[]>;

  constructor(
    bus: Bus,
    private readonly logger: Logger,
    ttlMs: number,
  ) {
    this.executable = executableSkillTools(bus);
    this.definitions = new TtlCache(ttlMs);
  }

  async tools(): Promise<AgentTool[]> {
    let definitions;
    try {
      definitions = await this.definitions.get(() => this.executable.definitions());
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'executable skills unavailable for this turn');
      return [];
    }
    return definitions.map((d) => ({
      definition: { name: d.name, description: d.description, input_schema: d.input_schema as AgentTool['definition']['input_schema'] },
      call: async (input, ctx) => {
        if (d.requiresConfirmation && !(await ctx.confirm('tool_call', d.name, `Allow ${d.name} with ${JSON.stringify(input)}?`))) {
          return failed(`The user declined the call to ${d.name}; nothing was done.`);
        }
        const res = await this.executable.call(d.name, input, { tenant: ctx.scope.tenant, agent: ctx.scope.agent });
        return { content: res.content, isError: res.isError };
      },
    }));
  }
}
