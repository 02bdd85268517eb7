import { ErrorCode, writerConditions, type Provenance, type ScopedWriter, type WriterQuery } from '#contracts';
import { AlfredError } from '#errors';
import { placeholderVector, type Collection, type CollectionSpec, type Condition, type DocScope, type StoredDoc, type VectorStore } from '#vector-store';

export const SKILL_PROVENANCE_COLLECTION = 'skill_provenance';

/** The two kinds of runtime-created skill: a SKILL.md skill (by name) and an executable skill (by id). */
export type SkillKind = 'skill' | 'executable';

/** A tenant's rows: skills belong to the tenant (any of its agents may write one), so the writer's agent is a field. */
const rowScope = (tenant: string): DocScope => ({ tenant, agent: '_skill_provenance' });
const rowId = (kind: SkillKind, name: string) => `${kind}:${name}`;

/**
 * Rows read by id and filtered by fields, like the memories' provenance (memory service): placeholder vectors of a
 * fixed size, so changing the embedder never touches them.
 */
export const SKILL_PROVENANCE_SPEC: CollectionSpec = {
  name: SKILL_PROVENANCE_COLLECTION,
  embedderId: 'placeholder',
  dimension: 8,
  fields: { kind: 'string', name: 'string', writer_agent: 'string', session: 'string', turn: 'string', key: 'string', via: 'string', source: 'string', written_at: 'string' },
};

/** Most rows a filtered list looks at. */
const FILTER_CAP = 5_000;

/**
 * Who wrote each skill created or changed at run time (through the API or an agent's skill tools): the tenant, the
 * writing agent, its session and turn or the API key's name, the tool (`via`) and the client's `source` — the same
 * Writer the gateway derives for memories. Shown on reads as `provenance` and used by the skills lists' filters.
 * The provenance describes the current version: a change records its writer.
 */
export class SkillProvenanceRepository {
  constructor(
    private readonly collection: Collection,
    private readonly now: () => Date = () => new Date(),
  ) {}

  static async open(store: VectorStore): Promise<SkillProvenanceRepository> {
    return new SkillProvenanceRepository(await store.open(SKILL_PROVENANCE_SPEC));
  }

  /**
   * Records the writer, then runs the write; a failed write puts the previous record back, and a record that cannot be
   * stored fails the request before anything is written.
   */
  async around<T>(tenant: string, kind: SkillKind, name: string | undefined, writer: ScopedWriter | undefined, write: () => Promise<T>): Promise<T> {
    if (!writer || !name) return write();
    const [before] = await this.collection.get(rowScope(tenant), [rowId(kind, name)]);
    try {
      await this.save(tenant, kind, name, writer);
    } catch (err) {
      throw new AlfredError(ErrorCode.ServiceUnavailable, 'who wrote the skill could not be recorded; nothing was changed', undefined, { cause: err });
    }
    try {
      return await write();
    } catch (err) {
      await (before ? this.collection.upsert([{ ...before, vector: placeholderVector(before.id, this.collection.spec.dimension) }]) : this.forget(tenant, kind, name)).catch(() => undefined);
      throw err;
    }
  }

  /** The items with their `provenance` where one was recorded. */
  async decorate<T>(tenant: string, kind: SkillKind, items: readonly T[], nameOf: (item: T) => string): Promise<T[]> {
    if (items.length === 0) return [];
    const docs = await this.collection.get(rowScope(tenant), [...new Set(items.map((i) => rowId(kind, nameOf(i))))]);
    const found = new Map(docs.map((d) => [d.id, fromDoc(d)]));
    return items.map((i) => {
      const provenance = found.get(rowId(kind, nameOf(i)));
      return provenance ? { ...i, provenance } : i;
    });
  }

  /** Names of the tenant's skills of `kind` whose writer matches every given filter. */
  async matching(tenant: string, kind: SkillKind, q: WriterQuery | undefined): Promise<Set<string>> {
    const where: Condition[] = [{ field: 'kind', op: 'eq', value: kind }, ...writerConditions(q).map((c) => ({ ...c, op: 'eq' as const }))];
    const { docs } = await this.collection.list({ ...rowScope(tenant), where }, { sortBy: 'written_at', order: 'desc', limit: FILTER_CAP, offset: 0 });
    return new Set(docs.map((d) => String(d.fields.name)));
  }

  async forget(tenant: string, kind: SkillKind, name: string): Promise<void> {
    await this.collection.delete(rowScope(tenant), [rowId(kind, name)]);
  }

  private async save(tenant: string, kind: SkillKind, name: string, w: ScopedWriter): Promise<void> {
    const id = rowId(kind, name);
    await this.collection.upsert([
      {
        id,
        ...rowScope(tenant),
        text: id,
        vector: placeholderVector(id, this.collection.spec.dimension),
        fields: {
          kind,
          name,
          writer_agent: w.agent,
          session: w.session ?? null,
          turn: w.turn ?? null,
          key: w.key ?? null,
          via: w.via ?? null,
          source: w.source ?? null,
          written_at: this.now().toISOString(),
        },
      },
    ]);
  }
}

function fromDoc(doc: StoredDoc): Provenance {
  const f = doc.fields;
  const opt = (k: string) => (typeof f[k] === 'string' && f[k] ? { [k]: f[k] as string } : {});
  return { tenant: doc.tenant, agent: String(f.writer_agent), ...opt('session'), ...opt('turn'), ...opt('key'), ...opt('via'), ...opt('source'), written_at: String(f.written_at) };
}
