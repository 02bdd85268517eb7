import type { Condition, FieldValue, StoredDoc } from '../vector-store.js';

/** A filter's conditions as a predicate over stored documents: what the stores' query filters mean, in memory. */
export function docPredicate(where: readonly Condition[] | undefined): ((doc: StoredDoc) => boolean) | undefined {
  if (!where || where.length === 0) return undefined;
  const tests = where.map(conditionTest);
  return (doc) => tests.every((t) => t(doc));
}

function conditionTest(c: Condition): (doc: StoredDoc) => boolean {
  const fieldOf = (doc: StoredDoc): FieldValue | undefined => (c.field === 'id' ? doc.id : doc.fields[c.field]);
  switch (c.op) {
    case 'eq':
      return (doc) => fieldOf(doc) === c.value;
    case 'ne':
      return (doc) => fieldOf(doc) !== c.value;
    case 'contains':
      return (doc) => {
        const v = fieldOf(doc);
        return Array.isArray(v) && v.includes(c.value);
      };
    case 'gte':
      return (doc) => comparable(fieldOf(doc), c.value) && (fieldOf(doc) as number | string) >= c.value;
    case 'lte':
      return (doc) => comparable(fieldOf(doc), c.value) && (fieldOf(doc) as number | string) <= c.value;
  }
}

const comparable = (v: FieldValue | undefined, bound: number | string) =>
  v !== null && v !== undefined && typeof v === typeof bound;
