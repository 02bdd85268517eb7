import { allows, policyRefusal } from '#agent-tools';
import type { AgentPolicy } from '#contracts';
import type { LlmTool } from '#llm';
import type { ToolSet } from './tool-set.js';
import { failed, type AgentTool, type ToolContext, type ToolOutcome, type ToolProvider } from './tool.types.js';

const byName = (a: AgentTool, b: AgentTool) => a.definition.name.localeCompare(b.definition.name);

/**
 * The tools of one turn, as the agent's policy permits (the one decision every path asks, for core tools as for the
 * rest: an agent whose policy denies `bash` has no bash): the core and skill tools, what providers offer every turn,
 * the tools the active skill declares (`allowed-tools`, for as long as it is active) and the tools made in this
 * turn. The list is stable between calls unless activation or a new tool changes it, so it stays in the cached
 * prefix; it never grows with the size of the executable-skill catalog.
 */
export class TurnTools {
  private declared: AgentTool[] = [];
  private readonly made = new Map<string, AgentTool>();

  private constructor(
    private readonly core: ToolSet,
    private readonly offered: AgentTool[],
    private readonly providers: readonly ToolProvider[],
    private readonly policy: AgentPolicy,
    private readonly ctx: Pick<ToolContext, 'scope' | 'sessionId'>,
  ) {}

  static async create(
    core: ToolSet,
    providers: readonly ToolProvider[],
    ctx: Pick<ToolContext, 'scope' | 'sessionId'>,
    policy: AgentPolicy,
  ): Promise<TurnTools> {
    const all = (await Promise.all(providers.map((p) => p.tools(ctx)))).flat();
    const offered = all.filter((t) => allows(policy, 'tool', t.definition.name));
    return new TurnTools(core, offered, providers, policy, ctx);
  }

  get definitions(): LlmTool[] {
    const seen = new Set<string>();
    const core = this.core.tools.filter((t) => allows(this.policy, 'tool', t.definition.name));
    return [...core, ...this.offered, ...[...this.declared].sort(byName), ...[...this.made.values()].sort(byName)]
      .filter((t) => !seen.has(t.definition.name) && seen.add(t.definition.name))
      .map((t) => t.definition);
  }

  /** The active skill changed: offer the tools its `allowed-tools` names (none when no skill is active). */
  async declare(allowedTools: readonly string[] | undefined): Promise<void> {
    this.declared = await this.find(allowedTools ?? [], false);
  }

  async call(name: string, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    // A denied tool is never offered; a model that calls it anyway is told so, and nothing runs.
    if (!allows(this.policy, 'tool', name)) return failed(policyRefusal(ctx.scope.agent, 'tool', name).message);
    const tool = this.lookup(name);
    if (!tool)
      return this.core.call(
        name,
        input,
        ctx,
        this.definitions.map((d) => d.name),
      );
    const outcome = await this.core.run(tool, input, ctx);
    if (outcome.offers?.length)
      for (const t of await this.find(outcome.offers, true)) this.made.set(t.definition.name, t);
    return outcome;
  }

  private lookup(name: string): AgentTool | undefined {
    return (
      this.offered.find((t) => t.definition.name === name) ??
      this.declared.find((t) => t.definition.name === name) ??
      this.made.get(name)
    );
  }

  private async find(names: readonly string[], fresh: boolean): Promise<AgentTool[]> {
    const permitted = names.filter((n) => allows(this.policy, 'tool', n));
    if (permitted.length === 0) return [];
    const found = await Promise.all(
      this.providers.map((p) => p.find?.(permitted, this.ctx, fresh) ?? Promise.resolve([])),
    );
    return found.flat();
  }
}
