import type { Checkpoint, CheckpointListQuery, Scope } from '#contracts';
import type { StoreWrite } from '#durable';
import { purgeScope } from '../scope-purge.js';
import type { Collection, CollectionSpec, Condition, StoredDoc } from '#vector-store';
import { storeWrite } from '../memory.repository.js';
import {
  PROVENANCE_FIELDS,
  provenanceConditions,
  provenanceFields,
  provenanceView,
  writtenByOf,
  type WrittenBy,
} from '../provenance/provenance-fields.js';

export const CHECKPOINT_COLLECTION = 'checkpoints';

export function checkpointCollectionSpec(embedderId: string, dimension: number): CollectionSpec {
  return {
    name: CHECKPOINT_COLLECTION,
    embedderId,
    dimension,
    fields: {
      name: 'string',
      summary: 'string',
      // lists as JSON text: they are shown, never filtered on (a string[] field would get a label index)
      done_json: 'string',
      next_json: 'string',
      tags: 'string[]',
      session_id: 'string',
      session_version: 'number',
      session_message_count: 'number',
      session_digest: 'string',
      created_at: 'string',
      ...PROVENANCE_FIELDS,
    },
  };
}

/** The text a checkpoint is embedded by (for future search); its fields are the record. */
export function checkpointText(c: Pick<Checkpoint, 'name' | 'summary' | 'done' | 'next'>): string {
  return [c.name, c.summary, ...c.done, ...c.next].join('\n');
}

/** Maps checkpoints to documents of the vector store and back; no logic of its own. */
export class CheckpointRepository {
  constructor(readonly collection: Collection) {}

  /** The store write of a new checkpoint (journaled where the store offers it), with who wrote it. */
  saveWrite(scope: Scope, c: Checkpoint, vector: Float32Array, written: WrittenBy): StoreWrite {
    return storeWrite(this.collection, { kind: 'insert', docs: [this.toDoc(scope, c, vector, written)] });
  }

  private toDoc(scope: Scope, c: Checkpoint, vector: Float32Array, written: WrittenBy) {
    return {
      id: c.id,
      tenant: scope.tenant,
      agent: scope.agent,
      text: checkpointText(c),
      vector,
      fields: {
        name: c.name,
        summary: c.summary,
        done_json: JSON.stringify(c.done),
        next_json: JSON.stringify(c.next),
        tags: [...c.tags],
        session_id: c.session?.id ?? null,
        session_version: c.session?.version ?? null,
        session_message_count: c.session?.message_count ?? null,
        session_digest: c.session?.digest ?? null,
        created_at: c.created_at,
        ...provenanceFields(written),
      },
    };
  }

  async get(scope: Scope, id: string): Promise<Checkpoint | undefined> {
    const [doc] = await this.collection.get(scope, [id]);
    return doc ? fromDoc(scope, doc) : undefined;
  }

  delete(scope: Scope, id: string): Promise<string[]> {
    return this.collection.delete(scope, [id]);
  }

  /** Deletes every one of the agent's (its agent is being deleted). */
  purge(scope: Scope): Promise<number> {
    return purgeScope(this.collection, scope);
  }

  /** Newest first; ties (same millisecond) keep a stable order by id. */
  async list(scope: Scope, query: CheckpointListQuery): Promise<{ checkpoints: Checkpoint[]; total: number }> {
    const where: Condition[] = [
      ...(query.tag ? [{ field: 'tags', op: 'contains' as const, value: query.tag }] : []),
      ...provenanceConditions(query),
    ];
    const { docs, total } = await this.collection.list(
      { ...scope, where },
      { sortBy: 'created_at', order: 'desc', limit: query.limit, offset: query.offset },
    );
    return { checkpoints: docs.map((d) => fromDoc(scope, d)), total };
  }
}

function stringList(json: unknown): string[] {
  if (typeof json !== 'string') return [];
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

function fromDoc(scope: Scope, doc: StoredDoc): Checkpoint {
  const f = doc.fields;
  const sessionId = typeof f.session_id === 'string' && f.session_id ? f.session_id : undefined;
  return {
    id: doc.id,
    name: String(f.name),
    summary: String(f.summary),
    done: stringList(f.done_json),
    next: stringList(f.next_json),
    tags: Array.isArray(f.tags) ? [...f.tags] : [],
    session: sessionId
      ? {
          id: sessionId,
          version: Number(f.session_version ?? 0),
          message_count: Number(f.session_message_count ?? 0),
          digest: String(f.session_digest ?? ''),
        }
      : null,
    created_at: String(f.created_at),
    ...provenanceView(scope, writtenByOf(f)),
  };
}
