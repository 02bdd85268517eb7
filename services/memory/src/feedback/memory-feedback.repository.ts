import type { FeedbackCounts, Scope } from '#contracts';
import { purgeScope } from '../scope-purge.js';
import type { Collection, CollectionSpec, StoredDoc } from '#vector-store';
import { placeholderVector } from './placeholder-vector.js';

export const MEMORY_FEEDBACK_COLLECTION = 'memory_feedback';

/**
 * Feedback counts live beside the memories, one row per rated memory, so the memories collection keeps its
 * shape (a field change there would need a reindex) and the memory read cache stays as it is.
 */
export function memoryFeedbackCollectionSpec(embedderId: string, dimension: number): CollectionSpec {
  return {
    name: MEMORY_FEEDBACK_COLLECTION,
    embedderId,
    dimension,
    fields: { helpful: 'number', unhelpful: 'number', updated_at: 'string' },
  };
}

/** Feedback counts of memories, by memory id, in the memory's tenant and agent. */
export class MemoryFeedbackRepository {
  constructor(private readonly collection: Collection) {}

  async get(scope: Scope, id: string): Promise<FeedbackCounts | undefined> {
    return (await this.getMany(scope, [id])).get(id);
  }

  async getMany(scope: Scope, ids: readonly string[]): Promise<Map<string, FeedbackCounts>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.get(scope, [...new Set(ids)]);
    return new Map(docs.map((d) => [d.id, countsOf(d)]));
  }

  async save(scope: Scope, id: string, counts: FeedbackCounts, at: string): Promise<void> {
    await this.collection.upsert([
      {
        id,
        tenant: scope.tenant,
        agent: scope.agent,
        text: id,
        vector: placeholderVector(id, this.collection.spec.dimension),
        fields: { helpful: counts.helpful, unhelpful: counts.unhelpful, updated_at: at },
      },
    ]);
  }

  delete(scope: Scope, ids: readonly string[]): Promise<string[]> {
    return this.collection.delete(scope, ids);
  }

  purge(scope: Scope): Promise<number> {
    return purgeScope(this.collection, scope, 'updated_at');
  }
}

function countsOf(doc: StoredDoc): FeedbackCounts {
  return { helpful: Number(doc.fields.helpful ?? 0), unhelpful: Number(doc.fields.unhelpful ?? 0) };
}
