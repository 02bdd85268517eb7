import {
  AgentFileRoutes,
  MemoryRoutes,
  SkillRoutes,
  type AgentFileKind,
  type Scope,
  type SkillRegistryIndex,
  type SkillSummary,
} from '#contracts';
import type { Bus } from '#bus';
import type { Logger } from '#logging';
import type { PromptMemory } from '../prompt/system-prompt.builder.js';

/** What a turn reads from other services before its first model call. */
export interface TurnContext {
  readonly files: Record<AgentFileKind, string>;
  readonly memories: ReadonlyArray<PromptMemory>;
  readonly skills: readonly SkillSummary[];
  readonly skillIndex: string;
}

/**
 * Flagged memories (content addressed to the model) are left out of the automatic recall: the agent sees them
 * only when it searches for them itself (GET /search shows each result's trust mark).
 *
 * Loads agent files (agent-runtime's own routes), relevant memories (memory search) and the level-1 index (skill
 * registry) in parallel. A capability that does not answer costs its section of the prompt, not the turn (logged).
 */
export async function loadTurnContext(
  bus: Bus,
  scope: Scope,
  message: string,
  memoryLimit: number,
  logger: Logger,
  skillIndex: () => Promise<SkillRegistryIndex> = () => bus.request(SkillRoutes.index, { tenant: scope.tenant }),
): Promise<TurnContext> {
  const soft = async <T>(what: string, fallback: T, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      logger.warn({ err: String(err), what }, 'turn context incomplete');
      return fallback;
    }
  };
  const file = (f: AgentFileKind) =>
    soft(`file ${f}`, '', async () => (await bus.request(AgentFileRoutes.get, { scope, file: f })).content);
  const [soul, user, memory, memories, index] = await Promise.all([
    file('soul'),
    file('user'),
    file('memory'),
    memoryLimit === 0
      ? []
      : soft(
          'memories',
          [],
          async () =>
            (
              await bus.request(MemoryRoutes.search, {
                scope,
                query: { q: message.slice(0, 2000), limit: memoryLimit, flagged: false },
              })
            ).results,
        ),
    soft<SkillRegistryIndex | undefined>('skills', undefined, skillIndex),
  ]);
  return {
    files: { soul, user, memory },
    memories,
    skills: index?.skills ?? [],
    skillIndex: index && index.skills.length > 0 ? index.rendered.markdown.text : '',
  };
}
