import type { FeedbackCounts, Scope } from '#contracts';
import type { StoreWrite } from '#durable';
import { addMirrored, counterKey, type Counters } from '#bus';
import { storeWrite } from '../memory.repository.js';
import { purgeScope } from '../scope-purge.js';
import { placeholderVector, type Collection, type CollectionSpec, type StoredDoc } from '#vector-store';

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

/**
 * Feedback counts of memories, by memory id, in the memory's tenant and agent. With shared `counters` (distributed:
 * a NATS KV bucket every instance increments by compare-and-set) they are the record and the rows a mirror; without
 * (embedded, one process) the rows are the record and the caller serialises each memory's changes in the process.
 */
export class MemoryFeedbackRepository {
  constructor(
    readonly collection: Collection,
    private readonly counters?: Counters,
  ) {}

  async get(scope: Scope, id: string): Promise<FeedbackCounts | undefined> {
    return (await this.getMany(scope, [id])).get(id);
  }

  async getMany(scope: Scope, ids: readonly string[]): Promise<Map<string, FeedbackCounts>> {
    if (ids.length === 0) return new Map();
    // Rows first, in one read: a count stands only once mirrored into its row (addMirrored), so only rated memories
    // (few of a search's candidates) cost a read of the shared counters, whose totals are the newest.
    const docs = await this.collection.get(scope, [...new Set(ids)]);
    const shared =
      this.counters && docs.length > 0 ? await this.counters.get(docs.map((d) => key(scope, d.id))) : undefined;
    return new Map(
      docs.map(
        (d) =>
          [d.id, shared?.has(key(scope, d.id)) ? fromCounters(shared.get(key(scope, d.id))) : countsOf(d)] as const,
      ),
    );
  }

  /** Whether counts are kept in counters every instance shares (distributed), not in this process's rows alone. */
  get shared(): boolean {
    return this.counters !== undefined;
  }

  /**
   * The store write of a memory's counts (journaled where the store offers it): for counts this process alone keeps.
   */
  saveWrite(scope: Scope, id: string, counts: FeedbackCounts, at: string): StoreWrite {
    return storeWrite(this.collection, { kind: 'upsert', docs: [this.doc(scope, id, counts, at)] });
  }

  /** Adds one report in the shared counters, atomically across instances, and mirrors the totals into the row. */
  async increment(scope: Scope, id: string, delta: FeedbackCounts, at: string): Promise<FeedbackCounts> {
    if (!this.counters) throw new Error('increment needs shared counters; without them the caller commits saveWrite');
    const seed = async () => (await this.collection.get(scope, [id])).map(countsOf)[0];
    return fromCounters(
      await addMirrored(this.counters, key(scope, id), { ...delta }, seed, (totals) =>
        this.save(scope, id, fromCounters(totals), at),
      ),
    );
  }

  async save(scope: Scope, id: string, counts: FeedbackCounts, at: string): Promise<void> {
    await this.collection.upsert([this.doc(scope, id, counts, at)]);
  }

  private doc(scope: Scope, id: string, counts: FeedbackCounts, at: string) {
    return {
      id,
      tenant: scope.tenant,
      agent: scope.agent,
      text: id,
      vector: placeholderVector(id, this.collection.spec.dimension),
      fields: { helpful: counts.helpful, unhelpful: counts.unhelpful, updated_at: at },
    };
  }

  async delete(scope: Scope, ids: readonly string[]): Promise<string[]> {
    await this.counters?.delete(ids.map((id) => key(scope, id)));
    return this.collection.delete(scope, ids);
  }

  async purge(scope: Scope): Promise<number> {
    await this.counters?.deletePrefix('memory-feedback', scope.tenant, scope.agent);
    return purgeScope(this.collection, scope, 'updated_at');
  }
}

const key = (scope: Scope, id: string) => counterKey('memory-feedback', scope.tenant, scope.agent, id);

function fromCounters(values: Record<string, number> | undefined): FeedbackCounts {
  return { helpful: values?.helpful ?? 0, unhelpful: values?.unhelpful ?? 0 };
}

function countsOf(doc: StoredDoc): FeedbackCounts {
  return { helpful: Number(doc.fields.helpful ?? 0), unhelpful: Number(doc.fields.unhelpful ?? 0) };
}
