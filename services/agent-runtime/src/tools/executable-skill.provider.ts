import {
  executableSkillTools,
  isManagementTool,
  MANAGEMENT_TOOLS,
  type ExecutableSkillTools,
  type ToolDefinition,
} from '#agent-tools';
import type { Bus } from '#bus';
import type { Logger } from '#logging';
import type { AgentTool, ToolContext, ToolOutcome, ToolProvider } from './tool.types.js';
import { notConfirmed } from './tool.types.js';
import { TtlCache } from '../turns/ttl-cache.js';

// A made or changed executable skill is offered as its tool for the rest of the turn.
const MAKES_TOOLS = new Set(['skill_create', 'skill_update']);

/**
 * Executable skills (skill.json + execute.ts, run by the skill-runner). Every turn offers their management tools;
 * a `skill_<id>` tool is offered only on demand (found by name: the tools an active skill declares, or one made in
 * this turn), so the tool list does not grow with the catalog. A call whose definition requires it is confirmed
 * first. When the registry does not answer, the turn simply has no executable-skill tools.
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

  async tools(): Promise<AgentTool[]> {
    return Object.values(MANAGEMENT_TOOLS).map((d) => this.tool(d));
  }

  async find(names: readonly string[], ctx: Pick<ToolContext, 'scope'>, fresh = false): Promise<AgentTool[]> {
    const wanted = new Set(names.filter((n) => n.startsWith('skill_') && !isManagementTool(n)));
    if (wanted.size === 0) return [];
    const tenant = ctx.scope.tenant;
    let cache = this.definitions.get(tenant);
    if (!cache) this.definitions.set(tenant, (cache = new TtlCache(this.ttlMs)));
    try {
      let defs = await cache.get(() => this.executable.definitions(tenant));
      if (fresh || [...wanted].some((n) => !defs.some((d) => d.name === n))) {
        defs = await this.executable.definitions(tenant);
        cache.set(defs);
      }
      return defs.filter((d) => wanted.has(d.name)).map((d) => this.tool(d));
    } catch (err) {
      this.logger.warn({ err: String(err) }, 'executable skills unavailable for this turn');
      return [];
    }
  }

  private tool(d: ToolDefinition): AgentTool {
    return {
      definition: {
        name: d.name,
        description: d.description,
        input_schema: d.input_schema as AgentTool['definition']['input_schema'],
      },
      call: async (input, ctx) => {
        if (d.requiresConfirmation) {
          const outcome = await ctx.confirm('tool_call', d.name, `Allow ${d.name} with ${JSON.stringify(input)}?`);
          if (outcome !== 'approved') return notConfirmed(outcome, `the call to ${d.name}`);
        }
        return this.run(d.name, input, ctx);
      },
    };
  }

  private async run(name: string, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    // Who writes a skill through skill_create / skill_update: this session and turn, through that tool (its
    // provenance).
    const writer = {
      agent: ctx.scope.agent,
      session: ctx.sessionId,
      ...(ctx.turnId ? { turn: ctx.turnId } : {}),
      via: `tool:${name}`,
    };
    const res = await this.executable.call(name, input, { tenant: ctx.scope.tenant, agent: ctx.scope.agent }, writer);
    const tool = (res.data as { tool?: unknown } | undefined)?.tool;
    if (res.isError || !MAKES_TOOLS.has(name) || typeof tool !== 'string')
      return { content: res.content, isError: res.isError };
    return {
      content: `${res.content}\n${tool} is one of your tools from now on in this turn. ${KEEP_HINT(tool)}`,
      isError: false,
      offers: [tool],
    };
  }
}

const KEEP_HINT = (tool: string) =>
  `To have it in later turns, name it in a skill's allowed-tools (e.g. \`allowed-tools: ${tool}\` in a ` +
  `SKILL.md) and activate that skill.`;
