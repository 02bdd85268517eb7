import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { CollectionSpec, Condition, Doc, FieldType, FieldValue } from './vector-store.js';

const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;

/** Checks a spec's names (they become table/column names) and its dimension. */
export function assertValidSpec(spec: CollectionSpec): void {
  if (!NAME.test(spec.name)) throw new RangeError(`invalid collection name "${spec.name}": use [a-z][a-z0-9_]*`);
  if (!Number.isInteger(spec.dimension) || spec.dimension < 1)
    throw new RangeError(`invalid dimension ${spec.dimension}`);
  for (const field of Object.keys(spec.fields)) {
    if (!FIELD.test(field)) throw new RangeError(`invalid field name "${field}"`);
  }
}

/** The error every store raises when data was made by another embedder (or dimension). */
export function embedderMismatch(spec: CollectionSpec, stored: { embedderId: string; dimension: number }): AlfredError {
  return new AlfredError(
    ErrorCode.EmbedderMismatch,
    `Collection "${spec.name}" was embedded by ${stored.embedderId} (${stored.dimension} dims), but the configured ` +
      `embedder is ${spec.embedderId} (${spec.dimension} dims). Run \`alfred reindex\` to re-embed the stored texts ` +
      `with the configured embedder, or configure ${stored.embedderId} again.`,
    { collection: spec.name, stored, configured: { embedderId: spec.embedderId, dimension: spec.dimension } },
  );
}

function fits(type: FieldType, value: FieldValue): boolean {
  if (value === null) return true;
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string[]':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

/** Refuses documents whose vector or fields do not match the spec: a programming error, not user input. */
export function assertValidDoc(spec: CollectionSpec, doc: Doc): void {
  const bad = (why: string) =>
    new AlfredError(ErrorCode.BadRequest, `document ${doc.id} does not fit collection ${spec.name}: ${why}`);
  if (doc.id.length === 0) throw bad('empty id');
  if (doc.vector.length !== spec.dimension)
    throw bad(`vector has ${doc.vector.length} dims, expected ${spec.dimension}`);
  for (const [field, value] of Object.entries(doc.fields)) {
    const type = spec.fields[field];
    if (type === undefined) throw bad(`unknown field "${field}"`);
    if (!fits(type, value)) throw bad(`field "${field}" must be ${type}`);
  }
}

/** Checks a filter condition against the spec's field types. */
export function assertValidCondition(spec: CollectionSpec, c: Condition): FieldType | 'id' {
  const type = c.field === 'id' ? 'id' : spec.fields[c.field];
  const bad = (why: string) => new AlfredError(ErrorCode.BadRequest, `filter on "${c.field}": ${why}`);
  if (type === undefined) throw bad('unknown field');
  if (c.op === 'contains' && type !== 'string[]') throw bad('contains needs a string[] field');
  if (c.op !== 'contains' && type === 'string[]') throw bad(`${c.op} is not supported on a string[] field`);
  if ((c.op === 'gte' || c.op === 'lte') && type === 'boolean')
    throw bad(`${c.op} is not supported on a boolean field`);
  return type;
}

/** Checks that a list can be sorted by the field. */
export function assertSortable(spec: CollectionSpec, sortBy: string): void {
  if (sortBy === 'id') return;
  const type = spec.fields[sortBy];
  if (type === undefined || type === 'string[]') {
    throw new AlfredError(ErrorCode.BadRequest, `cannot sort by "${sortBy}": not a scalar field of ${spec.name}`);
  }
}

/**
 * The fields a spec adds to a stored collection. Anything else — a field removed or of another type — needs a
 * migration (reindex); refusing beats writing into a different shape.
 */
export function addedFields(
  wanted: CollectionSpec,
  stored: Readonly<Record<string, FieldType>>,
): Array<[string, FieldType]> {
  const changed = Object.entries(stored).filter(([f, t]) => wanted.fields[f] !== t);
  if (changed.length > 0) {
    const a = JSON.stringify(Object.entries(stored).sort());
    const b = JSON.stringify(Object.entries(wanted.fields).sort());
    throw new AlfredError(
      ErrorCode.Conflict,
      `collection ${wanted.name} has fields ${a} but ${b} were asked for; run \`alfred reindex\``,
      {
        collection: wanted.name,
      },
    );
  }
  return Object.entries(wanted.fields).filter(([f]) => stored[f] === undefined);
}
