import type { Bus } from '#bus';
import type { LlmTool } from '#llm';
import { bashTool, type BashToolOptions } from './bash-tool.js';
import { fileTools } from './file-tools.js';
import { skillTools } from './skill-tools.js';
import { ToolInputError, failed, type AgentTool, type ToolContext, type ToolOutcome } from './tool.types.js';
import { OutsideWorkspaceError } from './workspace.js';

/** The tools of one turn: the four core tools, the skill tools, and any a provider adds. */
export class ToolSet {
  private readonly byName: Map<string, AgentTool>;

  constructor(tools: readonly AgentTool[]) {
    this.byName = new Map(tools.map((t) => [t.definition.name, t]));
  }

  static core(bus: Bus, bash: BashToolOptions, skillNames: readonly string[], extra: readonly AgentTool[] = []): ToolSet {
    return new ToolSet([...fileTools(bus, bash.maxOutputChars), bashTool(bash), ...skillTools(bus, skillNames), ...extra]);
  }

  get definitions(): LlmTool[] {
    return [...this.byName.values()].map((t) => t.definition);
  }

  /** Runs one call; every failure becomes an error result the model sees (the turn goes on). */
  async call(name: string, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
    const tool = this.byName.get(name);
    if (!tool) return failed(`no tool named "${name}"; the tools are: ${[...this.byName.keys()].join(', ')}`);
    try {
      return await tool.call(input, ctx);
    } catch (err) {
      return failed(describe(err));
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof ToolInputError || err instanceof OutsideWorkspaceError) return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return `no such file: ${e.path ?? ''}`.trim();
  if (e?.code === 'EISDIR') return 'the path is a folder, not a file';
  if (e?.code === 'ELOOP') return 'the path is a symbolic link; refused';
  return err instanceof Error ? err.message : String(err);
}
