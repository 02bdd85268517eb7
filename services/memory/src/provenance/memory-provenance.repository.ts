import { writerConditions, type Provenance, type Scope, type TrustMark, type Writer } from '#contracts';
import { placeholderVector, type Collection, type CollectionSpec, type Condition, type StoredDoc } from '#vector-store';
import { purgeScope } from '../scope-purge.js';

export const MEMORY_PROVENANCE_COLLECTION = 'memory_provenance';

/** What is kept about one memory's writing: who wrote it and the injection check's mark. */
export interface ProvenanceRecord {
  readonly writer: Writer;
  readonly written_at: string;
  readonly trust: TrustMark;
}

/**
 * Provenance and trust marks live beside the memories, one row per memory (like feedback counts), so the
 * memories collection keeps its shape: a field change there would make every existing store need a reindex.
 */
export function memoryProvenanceCollectionSpec(): CollectionSpec {
  return {
    name: MEMORY_PROVENANCE_COLLECTION,
    // Rows read by id and filtered by fields only: placeholder vectors of a fixed size, so changing the
    // embedder (and `alfred reindex`) never touches provenance.
    embedderId: 'placeholder',
    dimension: 8,
    fields: {
      session: 'string',
      turn: 'string',
      key: 'string',
      via: 'string',
      source: 'string',
      flagged: 'boolean',
      reasons: 'string[]',
      written_at: 'string',
    },
  };
}

/** The filters GET /memories and GET /search accept on provenance and trust. */
export interface ProvenanceQuery {
  readonly written_session?: string | undefined;
  readonly written_via?: string | undefined;
  readonly written_key?: string | undefined;
  readonly written_source?: string | undefined;
  readonly flagged?: boolean | undefined;
}

export class MemoryProvenanceRepository {
  constructor(private readonly collection: Collection) {}

  async save(scope: Scope, entries: ReadonlyArray<{ id: string; record: ProvenanceRecord }>): Promise<void> {
    if (entries.length === 0) return;
    const dimension = this.collection.spec.dimension;
    await this.collection.upsert(
      entries.map(({ id, record: r }) => ({
        id,
        tenant: scope.tenant,
        agent: scope.agent,
        text: id,
        vector: placeholderVector(id, dimension),
        fields: {
          session: r.writer.session ?? null,
          turn: r.writer.turn ?? null,
          key: r.writer.key ?? null,
          via: r.writer.via ?? null,
          source: r.writer.source ?? null,
          flagged: r.trust.flagged,
          reasons: [...r.trust.reasons],
          written_at: r.written_at,
        },
      })),
    );
  }

  async getMany(scope: Scope, ids: readonly string[]): Promise<Map<string, Provenance & { trust: TrustMark }>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.get(scope, [...new Set(ids)]);
    return new Map(docs.map((d) => [d.id, fromDoc(d)]));
  }

  /** Ids of the scope's memories whose provenance matches every given filter (newest first, at most `cap`). */
  async matching(scope: Scope, q: ProvenanceQuery, cap: number): Promise<string[]> {
    const where: Condition[] = writerConditions(q).map((c) => ({ ...c, op: 'eq' as const }));
    if (q.flagged !== undefined) where.push({ field: 'flagged', op: 'eq', value: q.flagged });
    const { docs } = await this.collection.list({ ...scope, where }, { sortBy: 'written_at', order: 'desc', limit: cap, offset: 0 });
    return docs.map((d) => d.id);
  }

  delete(scope: Scope, ids: readonly string[]): Promise<string[]> {
    return this.collection.delete(scope, ids);
  }

  purge(scope: Scope): Promise<number> {
    return purgeScope(this.collection, scope, 'written_at');
  }
}

function fromDoc(doc: StoredDoc): Provenance & { trust: TrustMark } {
  const f = doc.fields;
  const opt = (k: string) => (typeof f[k] === 'string' && f[k] ? { [k]: f[k] as string } : {});
  return {
    tenant: doc.tenant,
    agent: doc.agent,
    ...opt('session'),
    ...opt('turn'),
    ...opt('key'),
    ...opt('via'),
    ...opt('source'),
    written_at: String(f.written_at),
    trust: { flagged: f.flagged === true, reasons: Array.isArray(f.reasons) ? [...f.reasons] : [] },
  };
}
