import { SkillRoutes, type RecallHit, type RecallQuery, type RecallResponse, type Scope } from '#contracts';
import type { Bus, MessageContext } from '#bus';
import { estimateTokens } from '#text';
import type { MemorySearch } from '../search/memory-search.js';
import type { RemediationService } from '../remediations/remediation.service.js';
import { fillBudget } from './recall-budget.js';

/** The most hits one kind may bring; the SkillRoutes search limit is the smallest cap of the three. */
const PER_KIND_MAX = 50;

/**
 * One retrieval across memories, remediations and skills. Every kind is scored by the ranking module
 * (#ranking: the same relevance fusion, then each kind's adjustments), so one sort ranks them together;
 * the list is then filled into the caller's token budget.
 */
export class RecallService {
  constructor(
    private readonly memories: MemorySearch,
    private readonly remediations: RemediationService,
    private readonly bus: Bus,
  ) {}

  async recall(scope: Scope, query: RecallQuery, ctx?: MessageContext): Promise<RecallResponse> {
    const started = performance.now();
    const limit = Math.min(PER_KIND_MAX, query.limit);
    const search = { q: query.q, limit, min_score: query.min_score };
    const [memories, remediations, skills] = await Promise.all([
      this.memories.search(scope, { ...search, explain: false }),
      this.remediations.search(scope, search),
      this.bus.request(SkillRoutes.search, { tenant: scope.tenant, query: search }, ctx ? { context: ctx } : {}),
    ]);
    const hits: RecallHit[] = [
      ...memories.results.map((m) => hitOf('memory', m.id, undefined, m.score, m.content)),
      ...remediations.results.map((r) =>
        hitOf('remediation', r.id, undefined, r.score, `Error: ${r.error_message}\nFix: ${r.fix}`),
      ),
      ...skills.results.map((s) => hitOf('skill', s.name, s.name, s.score, `Skill ${s.name}: ${s.description}`)),
    ].sort((a, b) => b.score - a.score);
    const filled = fillBudget(hits, query.budget_tokens, query.limit);
    return {
      query: query.q,
      ...filled,
      budget_tokens: query.budget_tokens,
      search_time_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  }
}

function hitOf(kind: RecallHit['kind'], id: string, name: string | undefined, score: number, text: string): RecallHit {
  return { kind, id, ...(name ? { name } : {}), score, text, tokens: estimateTokens(text) };
}
