import type { SkillSource, SkillSummary } from '#contracts';
import type {
  Collection,
  CollectionSpec,
  DocScope,
  HitSignals,
  SearchOptions,
  StoredDoc,
  VectorStore,
} from '#vector-store';
import { isAlfredError } from '#errors';
import { ErrorCode } from '#contracts';

export const SKILL_COLLECTION = 'skills';

/**
 * Skills are capabilities of the deployment, shared by every tenant and agent (they come from the
 * registry's own folders), so their search documents live in one fixed system scope.
 */
export const SKILL_SCOPE: DocScope = { tenant: '_system', agent: '_skills' };

/** Where a tenant's own (API-created) skills are indexed: searched for that tenant only. */
export const tenantSkillScope = (tenant: string): DocScope => ({ tenant: `tenant:${tenant}`, agent: '_skills' });

export function skillCollectionSpec(embedderId: string, dimension: number): CollectionSpec {
  return {
    name: SKILL_COLLECTION,
    embedderId,
    dimension,
    fields: { description: 'string', source: 'string', location: 'string', version: 'string', digest: 'string' },
  };
}

/** What the search index holds about one skill, enough to tell whether it is stale. */
export interface IndexedSkill {
  readonly digest: string;
  readonly location: string;
}

export interface SkillSearchDoc {
  readonly skill: SkillSummary;
  readonly text: string;
  readonly vector: Float32Array;
}

export interface SkillHit {
  readonly name: string;
  readonly description: string;
  readonly source: SkillSource;
  readonly location: string;
  readonly version: string;
  readonly score: number;
  /** The store's evidence, for the ranking module. */
  readonly signals: HitSignals;
}

/**
 * Opens the skills collection. The index is derived data (rebuilt from the skill folders at any time),
 * so a collection made by another embedder is recreated instead of refused.
 */
export async function openSkillCollection(
  store: VectorStore,
  embedderId: string,
  dimension: number,
): Promise<Collection> {
  const spec = skillCollectionSpec(embedderId, dimension);
  try {
    return await store.open(spec);
  } catch (err) {
    if (isAlfredError(err) && err.code === ErrorCode.EmbedderMismatch) return store.recreate(spec);
    throw err;
  }
}

/** Maps skills to documents of the vector store and back; no logic of its own. */
export class SkillSearchRepository {
  constructor(private readonly collection: Collection) {}

  /** Every indexed skill by name, as stored. */
  async indexed(scope: DocScope = SKILL_SCOPE): Promise<Map<string, IndexedSkill>> {
    const out = new Map<string, IndexedSkill>();
    for await (const page of this.collection.scanAll(500)) {
      for (const doc of page) {
        if (doc.tenant !== scope.tenant || doc.agent !== scope.agent) continue;
        out.set(doc.id, { digest: String(doc.fields.digest ?? ''), location: String(doc.fields.location ?? '') });
      }
    }
    return out;
  }

  async upsert(docs: readonly SkillSearchDoc[], scope: DocScope = SKILL_SCOPE): Promise<void> {
    if (docs.length === 0) return;
    await this.collection.upsert(
      docs.map(({ skill, text, vector }) => ({
        ...scope,
        id: skill.name,
        text,
        vector,
        fields: {
          description: skill.description,
          source: skill.source,
          location: skill.location,
          version: skill.version,
          digest: skill.digest,
        },
      })),
    );
  }

  async delete(names: readonly string[], scope: DocScope = SKILL_SCOPE): Promise<void> {
    if (names.length > 0) await this.collection.delete(scope, names);
  }

  async search(query: SearchOptions, scope: DocScope = SKILL_SCOPE): Promise<{ hits: SkillHit[]; total: number }> {
    const { hits, total } = await this.collection.search(scope, query);
    return { hits: hits.map((h) => ({ ...fromDoc(h.doc), score: h.score, signals: h.signals })), total };
  }
}

function fromDoc(doc: StoredDoc): Omit<SkillHit, 'score' | 'signals'> {
  const f = doc.fields;
  return {
    name: doc.id,
    description: String(f.description ?? ''),
    source: String(f.source) as SkillSource,
    location: String(f.location ?? ''),
    version: String(f.version ?? ''),
  };
}
