import { executableSkillTools, type ExecutableSkillTools, type ToolDefinition } from '#agent-tools';
import type { Bus } from '#bus';
import type { Logger } from '#logging';
import type { AgentTool, ToolContext, ToolProvider } from './tool.types.js';
import { failed } from './tool.types.js';
import { TtlCache } from '../turns/ttl-cache.js';

/**
 * Executable skills (skill.json + execute.ts, run by the skill-runner) as `skill_<id>` tools of every turn, plus
 * their management tools. A call whose definition requires confirmation asks the user first. When the registry
 * does not answer, the turn simply has no executable-skill tools.
 */
export class ExecutableSkillToolProvider implements ToolProvider {
  private readonly executable: ExecutableSkillTools;
  /** Per tenant: one tenant's skills are never offered to another's agents. */
  private readonly definitions = new Map<string, TtlCache<ToolDefinition[]>>();

  constructor(
    bus: Bus,
    private readonly logger: Logger,
    private readonly ttlMs: number,
  ) {
    this.executable = executableSkillTools(bus);
  }

  async tools(ctx: Pick<ToolContext, 'scope'>): Promise<AgentTool[]> {
    const tenant = ctx.scope.tenant;
    let cache = this.definitions.get(tenant);
    if (!cache) this.definitions.set(tenant, (cache = new TtlCache(this.ttlMs)));
    let definitions;
    try {
      definitions = await cache.get(() => this.executable.definitions(tenant));
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
