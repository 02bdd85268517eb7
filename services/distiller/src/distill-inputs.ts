import { MemoryRoutes, type Scope } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import type { SessionAccess } from '#sessions';
import type { DistillItem } from './insight-clustering.js';

const PAGE = 100;
const MAX_MEMORIES = 2_000;
const MAX_SESSIONS = 20;
const SESSION_ITEM_IMPORTANCE = 0.4;

/** Daily memories from `since` on (all when undefined), newest first, through the memory service. */
export async function readMemories(
  bus: Bus,
  scope: Scope,
  since: string | undefined,
  context?: MessageContext,
): Promise<DistillItem[]> {
  const out: DistillItem[] = [];
  for (let offset = 0; offset < MAX_MEMORIES; offset += PAGE) {
    const page = await bus.request(
      MemoryRoutes.list,
      { scope, query: { source: 'daily', limit: PAGE, offset, sort_by: 'date', sort_order: 'desc' } },
      { context },
    );
    for (const m of page.memories) {
      if (since && m.timestamp < since) return out;
      // A flagged memory (text addressed to the model) never becomes an insight: MEMORY.md is part of the system
      // prompt.
      if (m.trust?.flagged) continue;
      out.push({ text: m.content, importance: m.importance, at: m.timestamp });
    }
    if (!page.pagination.has_more) break;
  }
  return out;
}

/** Ids of the insights already stored as memories (tag `insight-<id>`), so a retry never stores one twice. */
export async function storedInsightIds(bus: Bus, scope: Scope, context?: MessageContext): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; offset < MAX_MEMORIES; offset += PAGE) {
    const page = await bus.request(
      MemoryRoutes.list,
      { scope, query: { source: 'memory', limit: PAGE, offset } },
      { context },
    );
    for (const m of page.memories)
      for (const t of m.tags) if (t.startsWith('insight-')) ids.add(t.slice('insight-'.length));
    if (!page.pagination.has_more) break;
  }
  return ids;
}

/** What the user said in the agent's recent sessions (text of user messages), from `since` on. */
export async function readSessions(
  store: Pick<SessionAccess, 'list' | 'get'>,
  scope: Scope,
  since: string | undefined,
): Promise<DistillItem[]> {
  const { sessions } = await store.list(scope, { limit: MAX_SESSIONS });
  const out: DistillItem[] = [];
  for (const summary of sessions) {
    if (since && summary.updated_at < since) continue;
    const session = await store.get(scope, summary.id).catch(() => undefined);
    for (const m of session?.messages ?? []) {
      if (m.role !== 'user') continue;
      const text =
        typeof m.content === 'string'
          ? m.content
          : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' ');
      if (text.trim() && !text.startsWith('[Compacted summary'))
        out.push({ text: text.slice(0, 1000), importance: SESSION_ITEM_IMPORTANCE, at: summary.updated_at });
    }
  }
  return out;
}
