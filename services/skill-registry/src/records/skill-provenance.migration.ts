import { retireCollection, type VectorStore } from '#vector-store';
import type { SkillKind, SkillProvenanceRepository } from './skill-provenance.repository.js';

/** The vector-store collection an earlier version kept skill provenance in (rows read by id, placeholder vectors). */
export const LEGACY_SKILL_PROVENANCE = {
  name: 'skill_provenance',
  embedderId: 'placeholder',
  dimension: 8,
  fields: {
    kind: 'string',
    name: 'string',
    writer_agent: 'string',
    session: 'string',
    turn: 'string',
    key: 'string',
    via: 'string',
    source: 'string',
    written_at: 'string',
  },
} as const;

const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/**
 * Moves the skill provenance an earlier version kept as rows of the vector store into the key-value bucket, then
 * drops that collection; a record written since by this version is kept. An interrupted move is finished by the next
 * start (the collection is dropped only once every row is stored). Returns how many rows were moved.
 */
export async function moveSkillProvenanceRows(store: VectorStore, repo: SkillProvenanceRepository): Promise<number> {
  if (!(await store.describe(LEGACY_SKILL_PROVENANCE.name))) return 0;
  return retireCollection(store, await store.open(LEGACY_SKILL_PROVENANCE), async (doc) => {
    const f = doc.fields;
    const opt = (k: string) => (text(f[k]) ? { [k]: text(f[k]) } : {});
    const stored = {
      agent: String(f.writer_agent),
      ...opt('session'),
      ...opt('turn'),
      ...opt('key'),
      ...opt('via'),
      ...opt('source'),
      written_at: String(f.written_at),
    };
    await repo.adopt(doc.tenant, f.kind as SkillKind, String(f.name), stored);
  });
}
