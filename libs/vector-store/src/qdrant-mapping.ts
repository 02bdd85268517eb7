import { createHash } from 'node:crypto';
import type { Schemas } from '@qdrant/js-client-rest';
import { termHashes } from '#embeddings';
import { CONTEXT_WEIGHT } from '#ranking';
import { assertValidCondition } from './collection-spec.js';
import type {
  CollectionSpec,
  Condition,
  Doc,
  DocScope,
  FieldType,
  FieldValue,
  Filter,
  StoredDoc,
} from './vector-store.js';

/** BM25's term-frequency saturation; Qdrant's `idf` modifier supplies the idf factor at query time. */
const BM25_K1 = 1.2;

/**
 * Point ids must be UUIDs or integers, and the same doc id may exist in two scopes, so the point id
 * is a name-based (v5-style, SHA-1) UUID of tenant, agent and id; the original id stays in the payload.
 */
export function pointId(scope: DocScope, id: string): string {
  const h = createHash('sha1')
    .update(JSON.stringify([scope.tenant, scope.agent, id]))
    .digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Document-side sparse vector: BM25 term weights with b = 0 (Qdrant knows no average length), over the text
 * and, at CONTEXT_WEIGHT, its stored context.
 */
export function sparseDoc(text: string, context?: string): Schemas['SparseVector'] {
  const counts = termHashes(text);
  if (context)
    for (const [key, tf] of termHashes(context)) counts.set(key, (counts.get(key) ?? 0) + CONTEXT_WEIGHT * tf);
  return {
    indices: [...counts.keys()],
    values: [...counts.values()].map((tf) => (tf * (BM25_K1 + 1)) / (tf + BM25_K1)),
  };
}

/** Query-side sparse vector: each distinct term once. */
export function sparseQuery(text: string): Schemas['SparseVector'] {
  const keys = [...termHashes(text).keys()];
  return { indices: keys, values: keys.map(() => 1) };
}

export const payloadKey = (field: string): string => (field === 'id' ? 'doc_id' : `f_${field}`);

export function toPoint(spec: CollectionSpec, doc: Doc): Schemas['PointStruct'] {
  const payload: Record<string, unknown> = {
    doc_id: doc.id,
    tenant: doc.tenant,
    agent: doc.agent,
    text: doc.text,
    context: doc.context ?? null,
  };
  for (const field of Object.keys(spec.fields)) payload[payloadKey(field)] = doc.fields[field] ?? null;
  const sparse = sparseDoc(doc.text, doc.context);
  const vector: Record<string, number[] | Schemas['SparseVector']> = { dense: Array.from(doc.vector) };
  if (sparse.indices.length > 0) vector.bm25 = sparse;
  return { id: pointId(doc, doc.id), vector, payload };
}

export function fromPayload(spec: CollectionSpec, payload: Record<string, unknown> | null | undefined): StoredDoc {
  const p = payload ?? {};
  const fields: Record<string, FieldValue> = {};
  for (const field of Object.keys(spec.fields))
    fields[field] = (p[payloadKey(field)] as FieldValue | undefined) ?? null;
  const context = typeof p.context === 'string' && p.context.length > 0 ? { context: p.context } : {};
  return {
    id: p.doc_id as string,
    tenant: p.tenant as string,
    agent: p.agent as string,
    text: p.text as string,
    ...context,
    fields,
  };
}

export function scopeConditions(scope: DocScope): Schemas['FieldCondition'][] {
  return [
    { key: 'tenant', match: { value: scope.tenant } },
    { key: 'agent', match: { value: scope.agent } },
  ];
}

function condition(spec: CollectionSpec, c: Condition): Schemas['FieldCondition'] {
  assertValidCondition(spec, c);
  const key = payloadKey(c.field);
  if (c.op === 'gte' || c.op === 'lte') {
    // Qdrant ranges compare numbers, or RFC 3339 strings as datetimes (string range filters are dates in Alfred).
    return typeof c.value === 'number'
      ? { key, range: { [c.op]: c.value } }
      : { key, range: { [c.op]: c.value } as Schemas['DatetimeRange'] };
  }
  if ((c.op === 'eq' || c.op === 'ne') && typeof c.value === 'number')
    return { key, range: { gte: c.value, lte: c.value } };
  return { key, match: { value: c.value as string | boolean } };
}

/** Scope plus conditions, all required; a `ne` condition is its `eq` negated (a point without the field passes). */
export function toFilter(spec: CollectionSpec, filter: Filter): Schemas['Filter'] {
  const where = filter.where ?? [];
  const negated = where.filter((c) => c.op === 'ne').map((c) => condition(spec, c));
  return {
    must: [...scopeConditions(filter), ...where.filter((c) => c.op !== 'ne').map((c) => condition(spec, c))],
    ...(negated.length > 0 ? { must_not: negated } : {}),
  };
}

/** The payload index schema for each field type. */
export function indexSchema(type: FieldType): Schemas['PayloadSchemaType'] {
  switch (type) {
    case 'string':
    case 'string[]':
      return 'keyword';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
  }
}
