import type { FeedbackCounts, Memory, Scope, SearchQuery, SearchResponse } from '#contracts';
import type { Embedder } from '#embeddings';
import { candidatePool, type Ranker } from '#ranking';
import type { MemoryFeedbackRepository } from '../feedback/memory-feedback.repository.js';
import { toMemory, type MemoryRecord, type MemoryRepository } from '../memory.repository.js';

/**
 * Memory search in one pass: the store brings candidates with their lexical/dense evidence (from the scope's
 * own index), feedback counts are read beside them, and the ranking module scores every signal at once.
 * `total` is the store's count at the lowest relevance the adjustments could lift to min_score, less the
 * candidates that fell below it after adjusting.
 */
export class MemorySearch {
  constructor(
    private readonly memories: MemoryRepository,
    private readonly feedback: MemoryFeedbackRepository,
    /** Embeds queries (a CachedEmbedder spares the model repeated ones); only used when dense similarity counts. */
    private readonly queryEmbedder: Embedder,
    private readonly ranker: Ranker,
  ) {}

  async search(scope: Scope, query: SearchQuery): Promise<SearchResponse> {
    const started = performance.now();
    const vector = this.ranker.uses('dense') ? (await this.queryEmbedder.embed([query.q]))[0] : undefined;
    const { hits, total } = await this.memories.search(scope, {
      ...(vector ? { vector } : {}),
      text: query.q,
      limit: candidatePool(query.limit),
      minScore: this.ranker.relevanceFloor(query.min_score),
      fuse: (signals) => this.ranker.relevance(signals),
      source: query.source,
      provenance: query,
    });
    const counts = await this.feedback.getMany(
      scope,
      hits.map((h) => h.record.id),
    );
    // Ranked as stored records; only the page is turned into API memories.
    const ranked = this.ranker.rank(
      hits.map(({ record, signals }) => ({
        item: record,
        evidence: { ...signals, ...priorsOf(record, counts.get(record.id)) },
      })),
      { minScore: query.min_score, limit: query.limit, key: (r) => r.id, explain: query.explain },
    );
    return {
      results: ranked.hits.map(({ item, score, explanation }) => ({
        ...withCounts(scope, item, counts.get(item.id)),
        score,
        ...(explanation ? { explanation: [...explanation] } : {}),
      })),
      query: query.q,
      total: Math.max(ranked.hits.length, total - ranked.dropped),
      search_time_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  }
}

function priorsOf(record: MemoryRecord, feedback: FeedbackCounts | undefined) {
  return {
    importance: record.importance,
    writtenAt: Date.parse(record.updated_at ?? record.timestamp),
    ...(feedback ? { feedback } : {}),
  };
}

function withCounts(scope: Scope, record: MemoryRecord, counts: FeedbackCounts | undefined): Memory {
  const memory = toMemory(scope, record);
  return counts ? { ...memory, feedback: counts } : memory;
}
