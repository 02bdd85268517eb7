import { retireCollection, type Collection, type CollectionSpec, type VectorStore } from '#vector-store';
import type { MemoryFeedbackRepository } from './memory-feedback.repository.js';

/** The vector-store collection an earlier version kept feedback counts in (one row per rated memory). */
export const LEGACY_FEEDBACK_COLLECTION = 'memory_feedback';

/**
 * The earlier version's feedback collection, opened as it was made, when it still exists: its writes may wait in the
 * outbox, which replays them into it at start, before {@link moveFeedbackRows} reads it.
 */
export async function openLegacyFeedback(store: VectorStore): Promise<Collection | undefined> {
  const made = await store.describe(LEGACY_FEEDBACK_COLLECTION);
  if (!made) return undefined;
  const spec: CollectionSpec = {
    name: LEGACY_FEEDBACK_COLLECTION,
    ...made,
    fields: { helpful: 'number', unhelpful: 'number', updated_at: 'string' },
  };
  return store.open(spec);
}

/**
 * Moves the counts of the earlier version's rows into the counters (a memory counted since keeps its counters:
 * distributed, the rows only mirrored them), then drops the collection. A move interrupted half-way is finished by the
 * next start (the collection goes last). Returns how many rows were moved.
 */
export async function moveFeedbackRows(
  store: VectorStore,
  legacy: Collection,
  repo: MemoryFeedbackRepository,
): Promise<number> {
  return retireCollection(store, legacy, async (doc) => {
    const counts = { helpful: Number(doc.fields.helpful ?? 0), unhelpful: Number(doc.fields.unhelpful ?? 0) };
    await repo.adopt({ tenant: doc.tenant, agent: doc.agent }, doc.id, counts);
  });
}
