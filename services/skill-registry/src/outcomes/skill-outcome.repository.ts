import type { SkillOutcomes } from '#contracts';
import { counterKey, type Counters } from '#bus';
import { retireCollection, type VectorStore } from '#vector-store';
import { successEstimate } from './skill-outcome.prior.js';

export function withEstimate(c: { success: number; failure: number }): SkillOutcomes {
  return {
    success: c.success,
    failure: c.failure,
    estimate: Math.round(successEstimate(c.success, c.failure) * 1000) / 1000,
  };
}

const key = (tenant: string, name: string) => counterKey('skill-outcomes', tenant, name);
const fromCounters = (c: Record<string, number>) => ({ success: c.success ?? 0, failure: c.failure ?? 0 });

/**
 * Success/failure counts per tenant and skill name (skills are shared, but what they achieved is each tenant's own
 * record), in counters on the key-value port: distributed, the NATS KV bucket every instance increments by
 * compare-and-set; embedded, files under the data dir.
 */
export class SkillOutcomeRepository {
  constructor(private readonly counters: Counters) {}

  async getMany(tenant: string, names: readonly string[]): Promise<Map<string, SkillOutcomes>> {
    if (names.length === 0) return new Map();
    const unique = [...new Set(names)];
    const found = await this.counters.get(unique.map((n) => key(tenant, n)));
    return new Map(
      unique.flatMap((n) =>
        found.has(key(tenant, n)) ? [[n, withEstimate(fromCounters(found.get(key(tenant, n))!))] as const] : [],
      ),
    );
  }

  /** Adds outcomes (one or a batch) to a skill's counts; answers the counts after them. */
  async add(tenant: string, name: string, delta: { success: number; failure: number }): Promise<SkillOutcomes> {
    return withEstimate(fromCounters(await this.counters.add(key(tenant, name), { ...delta })));
  }
}

/** The vector-store collection an earlier version kept outcome counts in (rows read by id, placeholder vectors). */
const LEGACY_COLLECTION = {
  name: 'skill_outcomes',
  embedderId: 'placeholder',
  dimension: 8,
  fields: { success: 'number', failure: 'number', updated_at: 'string' },
} as const;

/**
 * Moves the counts an earlier version kept as rows of the vector store into the counters (a key counted since keeps
 * its counters: distributed, the rows mirrored them), then drops that collection. Returns how many rows were moved.
 */
export async function moveSkillOutcomeRows(store: VectorStore, counters: Counters): Promise<number> {
  if (!(await store.describe(LEGACY_COLLECTION.name))) return 0;
  return retireCollection(store, await store.open(LEGACY_COLLECTION), async (doc) => {
    const row = { success: Number(doc.fields.success ?? 0), failure: Number(doc.fields.failure ?? 0) };
    // No deltas: a key that exists keeps its totals; a new one starts from the row.
    await counters.add(key(doc.tenant, doc.id), {}, async () => row);
  });
}
