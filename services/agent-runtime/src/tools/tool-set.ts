import type { Bus } from '#bus';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import { fileTools } from './file-tools.js';
import { skillTools } from './skill-tools.js';
import { ToolInputError, failed, type AgentTool, type ToolContext, type ToolOutcome } from './tool.types.js';
import { OutsideWorkspaceError, WorkspaceQuotaError } from './workspace.js';

/** The core tools of every turn (read, write, edit, bash) and the skill tools (load_skill, activate / deactivate). */
export class ToolSet {
  private readonly byName: Map<string, AgentTool>;

  constructor(readonly tools: readonly AgentTool[]) {
    this.byName = new Map(tools.map((t) => [t.definition.name, t]));
  }

  static core(bus: Bus, bash: BashToolOptions, skillNames: readonly string[]): ToolSet {
    return new ToolSet([...fileTools(bus, bash.maxOutputChars), bashTool(bash), ...skillTools(bus, skillNames)]);
  }

  /** Runs one call of a tool of this set; an unknown name is an error result naming the tools there are. */
  async call(
    name: string,
    input: Record<string, unknown>,
    ctx: ToolContext,
    allNames: readonly string[] = [...this.byName.keys()],
  ): Promise<ToolOutcome> {
    const tool = this.byName.get(name);
    if (!tool) return failed(`no tool named "${name}"; the tools are: ${allNames.join(', ')}`);
    return this.run(tool, input, ctx);
  }

  /** Runs one call; every failure becomes an error result the model sees (the turn goes on). */
  async run(tool: AgentTool, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    try {
      return await tool.call(input, ctx);
    } catch (err) {
      return failed(describe(err));
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof ToolInputError || err instanceof OutsideWorkspaceError || err instanceof WorkspaceQuotaError)
    return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return `no such file: ${e.path ?? ''}`.trim();
  if (e?.code === 'EISDIR') return 'the path is a folder, not a file';
  if (e?.code === 'ELOOP') return 'the path is a symbolic link; refused';
  return err instanceof Error ? err.message : String(err);
}
