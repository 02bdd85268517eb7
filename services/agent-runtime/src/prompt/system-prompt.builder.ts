import type { AgentView } from '#contracts';
import type { SystemPrompt } from '#llm';

/** What one turn's system prompt is made of, gathered before the first model call. */
export interface PromptParts {
  readonly agent: AgentView;
  readonly soul: string;
  readonly user: string;
  readonly memoryFile: string;
  /** Memories most relevant to the user's message, best first. */
  readonly memories: ReadonlyArray<{ content: string; importance: number }>;
  /** The registry's rendered level-1 index (markdown); empty when there are no skills. */
  readonly skillIndex: string;
  /** The active skill's body, rendered; undefined when none is active. */
  readonly activeSkill?: string;
}

export interface PromptEnvironment {
  readonly now: Date;
  readonly workingDirectory: string;
  readonly apiUrl: string;
  readonly sessionId: string;
}

function core(agent: AgentView): string {
  return [
    `You are ${agent.name}, an assistant built on Alfred.`,
    agent.persona ? `\n## Persona\n${agent.persona.trim()}` : '',
    '\n## How you work',
    'You have four core tools: read, write, edit and bash. Everything else you can do comes from skills:',
    'the "Available skills" section lists them; call load_skill with a name to read its full instructions before',
    'following them. Skills reach Alfred (memories, search, learning, compaction) with curl through bash at $ALFRED_API_URL.',
    'activate_skill asks the user before a skill stays active for the session; deactivate_skill ends it.',
  ].filter(Boolean).join('\n');
}

function section(title: string, text: string): string {
  const body = text.trim();
  return body ? `## ${title}\n\n${body}` : '';
}

/**
 * The system prompt in a fixed order: persona and SOUL.md, USER.md, MEMORY.md with the relevant memories, the
 * level-1 skill index (and the active skill) form the stable, cached prefix; the environment follows, volatile.
 */
export function buildSystemPrompt(parts: PromptParts, env: PromptEnvironment): SystemPrompt {
  const memories = parts.memories.map((m) => `- ${m.content.replace(/\s+/g, ' ').trim()}`).join('\n');
  const stable = [
    [core(parts.agent), section('SOUL.md', parts.soul)].filter(Boolean).join('\n\n'),
    section('USER.md', parts.user),
    [section('MEMORY.md', parts.memoryFile), section('Relevant memories', memories)].filter(Boolean).join('\n\n'),
    parts.skillIndex.trim(),
    parts.activeSkill ? section('Active skill', parts.activeSkill) : '',
  ].filter((s) => s.length > 0);
  const volatile = [
    '## Environment',
    `- Time: ${env.now.toISOString()}`,
    `- Working directory: ${env.workingDirectory}`,
    `- Alfred API: ${env.apiUrl} (also $ALFRED_API_URL in bash)`,
    `- Agent: ${parts.agent.name} ($ALFRED_AGENT); session: ${env.sessionId} ($ALFRED_SESSION_ID)`,
  ].join('\n');
  return { stable, volatile };
}
