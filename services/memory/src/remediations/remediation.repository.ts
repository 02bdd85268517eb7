import type { Remediation, Scope } from '#contracts';
import type { StoreWrite } from '#durable';
import { purgeScope } from '../scope-purge.js';
import type { Collection, CollectionSpec, Condition, HitSignals, SearchOptions, StoredDoc } from '#vector-store';
import { storeWrite } from '../memory.repository.js';
import {
  PROVENANCE_FIELDS,
  provenanceConditions,
  provenanceFields,
  provenanceView,
  writtenByOf,
  type ProvenanceQuery,
  type WrittenBy,
} from '../provenance/provenance-fields.js';

/** A remediation as stored: with who wrote it (kept across feedback, which rewrites the record). */
export interface RemediationRecord {
  readonly remediation: Remediation;
  readonly written?: WrittenBy;
}

export const REMEDIATION_COLLECTION = 'remediations';

export function remediationCollectionSpec(embedderId: string, dimension: number): CollectionSpec {
  return {
    name: REMEDIATION_COLLECTION,
    embedderId,
    dimension,
    fields: {
      error_message: 'string',
      stack: 'string',
      tool: 'string',
      tags: 'string[]',
      fix: 'string',
      context: 'string',
      helpful: 'number',
      unhelpful: 'number',
      created_at: 'string',
      updated_at: 'string',
      ...PROVENANCE_FIELDS,
    },
  };
}

/** Maps remediations to documents: the indexed text is the normalised error signature. */
export class RemediationRepository {
  constructor(readonly collection: Collection) {}

  /** The store write of a remediation (journaled where the store offers it). */
  saveWrite(scope: Scope, record: RemediationRecord, vector: Float32Array, kind: 'insert' | 'upsert'): StoreWrite {
    return storeWrite(this.collection, { kind, docs: [this.toDoc(scope, record, vector)] });
  }

  private toDoc(scope: Scope, { remediation: r, written }: RemediationRecord, vector: Float32Array) {
    return {
      id: r.id,
      tenant: scope.tenant,
      agent: scope.agent,
      text: r.signature,
      vector,
      fields: {
        error_message: r.error_message,
        stack: r.stack ?? null,
        tool: r.tool ?? null,
        tags: [...r.tags],
        fix: r.fix,
        context: r.context ?? null,
        helpful: r.feedback.helpful,
        unhelpful: r.feedback.unhelpful,
        created_at: r.created_at,
        updated_at: r.updated_at ?? null,
        ...provenanceFields(written),
      },
    };
  }

  async get(scope: Scope, id: string): Promise<RemediationRecord | undefined> {
    const [doc] = await this.collection.get(scope, [id]);
    return doc ? recordOf(doc) : undefined;
  }

  delete(scope: Scope, id: string): Promise<string[]> {
    return this.collection.delete(scope, [id]);
  }

  /** Deletes every one of the agent's (its agent is being deleted). */
  purge(scope: Scope): Promise<number> {
    return purgeScope(this.collection, scope);
  }

  async search(
    scope: Scope,
    query: SearchOptions & { tool?: string | undefined; provenance?: ProvenanceQuery },
  ): Promise<{ hits: Array<{ remediation: Remediation; score: number; signals: HitSignals }>; total: number }> {
    const { tool, provenance, ...options } = query;
    const where: Condition[] = [
      ...(tool ? [{ field: 'tool', op: 'eq' as const, value: tool }] : []),
      ...provenanceConditions(provenance ?? {}),
    ];
    const { hits, total } = await this.collection.search({ ...scope, where }, options);
    return {
      hits: hits.map((h) => ({ remediation: viewOf(scope, recordOf(h.doc)), score: h.score, signals: h.signals })),
      total,
    };
  }
}

const optional = (key: string, value: unknown) =>
  typeof value === 'string' && value.length > 0 ? { [key]: value } : {};

/** The API view: the remediation with `provenance` and `trust` when it has them. */
export function viewOf(scope: Scope, { remediation, written }: RemediationRecord): Remediation {
  return { ...remediation, ...provenanceView(scope, written) };
}

function recordOf(doc: StoredDoc): RemediationRecord {
  const written = writtenByOf(doc.fields);
  return { remediation: fromDoc(doc), ...(written ? { written } : {}) };
}

function fromDoc(doc: StoredDoc): Remediation {
  const f = doc.fields;
  return {
    id: doc.id,
    error_message: String(f.error_message ?? ''),
    ...optional('stack', f.stack),
    ...optional('tool', f.tool),
    tags: Array.isArray(f.tags) ? [...f.tags] : [],
    fix: String(f.fix ?? ''),
    ...optional('context', f.context),
    signature: doc.text,
    feedback: { helpful: Number(f.helpful ?? 0), unhelpful: Number(f.unhelpful ?? 0) },
    created_at: String(f.created_at),
    ...optional('updated_at', f.updated_at),
  };
}
