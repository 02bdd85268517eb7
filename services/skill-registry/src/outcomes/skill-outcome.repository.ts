import type { SkillOutcomes } from '#contracts';
import { addMirrored, counterKey, type Counters } from '#bus';
import { placeholderVector, type Collection, type CollectionSpec, type DocScope, type StoredDoc, type VectorStore } from '#vector-store';
import { successEstimate } from './skill-outcome.prior.js';

export const SKILL_OUTCOME_COLLECTION = 'skill_outcomes';

/** A tenant's outcome counts: skills are shared, but what they achieved is each tenant's own record. */
const outcomeScope = (tenant: string): DocScope => ({ tenant, agent: '_skill_outcomes' });

/**
 * Rows read by id only: their vectors are placeholders of a fixed size, not the embedder's, so changing the
 * embedder (or reindexing) never touches the counts.
 */
export const SKILL_OUTCOME_SPEC: CollectionSpec = {
  name: SKILL_OUTCOME_COLLECTION,
  embedderId: 'placeholder',
  dimension: 8,
  fields: { success: 'number', failure: 'number', updated_at: 'string' },
};

export function openSkillOutcomes(store: VectorStore): Promise<Collection> {
  return store.open(SKILL_OUTCOME_SPEC);
}

export function withEstimate(c: { success: number; failure: number }): SkillOutcomes {
  return { success: c.success, failure: c.failure, estimate: Math.round(successEstimate(c.success, c.failure) * 1000) / 1000 };
}

/**
 * Success/failure counts per tenant and skill name, read by id. With shared `counters` (distributed: a NATS KV bucket
 * every instance increments by compare-and-set) they are the record and the rows a mirror; without (embedded, one
 * process) the rows are the record and the caller serialises each skill's writes.
 */
export class SkillOutcomeRepository {
  constructor(
    private readonly collection: Collection,
    private readonly counters?: Counters,
  ) {}

  async getMany(tenant: string, names: readonly string[]): Promise<Map<string, SkillOutcomes>> {
    if (names.length === 0) return new Map();
    // Rows first, in one read: a count stands only once mirrored into its row (addMirrored), so only skills with
    // outcomes cost a read of the shared counters, whose totals are the newest.
    const docs = await this.collection.get(outcomeScope(tenant), [...new Set(names)]);
    const shared = this.counters && docs.length > 0 ? await this.counters.get(docs.map((d) => key(tenant, d.id))) : undefined;
    return new Map(docs.map((d) => [d.id, withEstimate(shared?.has(key(tenant, d.id)) ? fromCounters(shared.get(key(tenant, d.id))!) : countsOf(d))] as const));
  }

  /** Adds outcomes (one or a batch) to a skill's counts; answers the counts after them. */
  async add(tenant: string, name: string, delta: { success: number; failure: number }, at: string): Promise<SkillOutcomes> {
    const save = (counts: { success: number; failure: number }) =>
      this.collection.upsert([
        { id: name, ...outcomeScope(tenant), text: name, vector: placeholderVector(name, this.collection.spec.dimension), fields: { ...counts, updated_at: at } },
      ]);
    if (this.counters) {
      const seed = async () => (await this.collection.get(outcomeScope(tenant), [name])).map(countsOf)[0];
      const c = await addMirrored(this.counters, key(tenant, name), { ...delta }, seed, (totals) => save(fromCounters(totals)));
      return withEstimate(fromCounters(c));
    }
    const before = (await this.getMany(tenant, [name])).get(name) ?? { success: 0, failure: 0 };
    const after = { success: before.success + delta.success, failure: before.failure + delta.failure };
    await save(after);
    return withEstimate(after);
  }
}

const key = (tenant: string, name: string) => counterKey('skill-outcomes', tenant, name);

const fromCounters = (c: Record<string, number>) => ({ success: c.success ?? 0, failure: c.failure ?? 0 });

function countsOf(doc: StoredDoc): { success: number; failure: number } {
  return { success: Number(doc.fields.success ?? 0), failure: Number(doc.fields.failure ?? 0) };
}
