import { createHash } from 'node:crypto';
import type { SkillOutcomes } from '#contracts';
import type { Collection, CollectionSpec, DocScope, VectorStore } from '#vector-store';
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

/** Success/failure counts per tenant and skill name, read by id; writes are serialised per skill by the caller. */
export class SkillOutcomeRepository {
  constructor(private readonly collection: Collection) {}

  async getMany(tenant: string, names: readonly string[]): Promise<Map<string, SkillOutcomes>> {
    if (names.length === 0) return new Map();
    const docs = await this.collection.get(outcomeScope(tenant), [...new Set(names)]);
    return new Map(docs.map((d) => [d.id, withEstimate({ success: Number(d.fields.success ?? 0), failure: Number(d.fields.failure ?? 0) })]));
  }

  async add(tenant: string, name: string, success: boolean, at: string): Promise<SkillOutcomes> {
    const before = (await this.getMany(tenant, [name])).get(name) ?? { success: 0, failure: 0 };
    const after = { success: before.success + (success ? 1 : 0), failure: before.failure + (success ? 0 : 1) };
    await this.collection.upsert([
      { id: name, ...outcomeScope(tenant), text: name, vector: unitVector(name, this.collection.spec.dimension), fields: { ...after, updated_at: at } },
    ]);
    return withEstimate(after);
  }
}

/** A unit vector from a key (rows read by id only still need one). */
function unitVector(key: string, dimension: number): Float32Array {
  const v = new Float32Array(dimension);
  const h = createHash('sha256').update(key).digest();
  for (let i = 0; i < dimension; i++) v[i] = h[i % h.length]! / 255 - 0.5;
  const norm = Math.hypot(...v) || 1;
  for (let i = 0; i < dimension; i++) v[i]! /= norm;
  return v;
}
