import {
  Int8,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  vectorFromArray,
  type Data,
  type DataType,
} from 'apache-arrow';
import type { CollectionSpec, Doc, DocScope, FieldType, FieldValue, StoredDoc } from './vector-store.js';

/** Schema metadata key holding the embedder id and dimension, so they travel with the table. */
export const META_KEY = 'alfred';
export const BASE_COLUMNS = ['id', 'tenant', 'agent', 'text'] as const;
/** Indexed-only text (Doc.context); the last column, so tables made before it gain it by an added column. */
export const CONTEXT_COLUMN = 'context';
/**
 * The row's document (text, context and fields) as one JSON string, beside the columns that filters and sorts read.
 * A cold scope's load reads this column and the id instead of every column: each row of an agent lies elsewhere in
 * the table, and a read pays per row for each column it selects (~1 ms per column for 100 rows at a million rows:
 * 42 ms for the 20 columns, 25 for these two). Null in rows written before the column was added.
 */
export const DOC_COLUMN = 'doc';

export interface StoredMeta {
  readonly embedderId: string;
  readonly dimension: number;
  readonly fields: Readonly<Record<string, FieldType>>;
}

/** Spec fields live in `f_<name>` columns so they can never collide with id/tenant/agent/text/vector. */
export const fieldColumn = (field: string): string => (field === 'id' ? 'id' : `f_${field}`);

function arrowType(type: FieldType): DataType {
  switch (type) {
    case 'string':
      return new Utf8();
    case 'number':
      return new Float64();
    case 'boolean':
      // Int8 0/1/null: arrow JS's IPC writer emits an empty buffer for an all-null Bool column, which Lance rejects.
      return new Int8();
    case 'string[]':
      return new List(new Field('item', new Utf8(), true));
  }
}

/**
 * The table's Arrow schema; with `order` (a stored table's column names), its columns in that order: fields added
 * to a table since it was made come after the others.
 */
export function tableSchema(spec: CollectionSpec, order?: readonly string[]): Schema {
  const meta: StoredMeta = { embedderId: spec.embedderId, dimension: spec.dimension, fields: spec.fields };
  const fields = [
    ...BASE_COLUMNS.map((name) => new Field(name, new Utf8(), false)),
    new Field('vector', new FixedSizeList(spec.dimension, new Field('item', new Float32(), true)), false),
    ...Object.entries(spec.fields).map(([name, type]) => new Field(fieldColumn(name), arrowType(type), true)),
    new Field(CONTEXT_COLUMN, new Utf8(), true),
    new Field(DOC_COLUMN, new Utf8(), true),
  ];
  if (order) {
    const at = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    fields.sort((a, b) => at(a.name) - at(b.name));
  }
  return new Schema(fields, new Map([[META_KEY, JSON.stringify(meta)]]));
}

/** The schema of a partial write: the key columns and some fields, typed as the table's. */
export function partialSchema(schema: Schema, columns: readonly string[]): Schema {
  return new Schema(schema.fields.filter((f) => columns.includes(f.name)));
}

export function readMeta(schema: Schema): StoredMeta | undefined {
  const raw = schema.metadata.get(META_KEY);
  return raw === undefined ? undefined : (JSON.parse(raw) as StoredMeta);
}

/** Columns to select for reads of whole rows (no vector, no doc: they hold it column by column). */
export function docColumns(spec: CollectionSpec): string[] {
  return [...BASE_COLUMNS, ...Object.keys(spec.fields).map(fieldColumn), CONTEXT_COLUMN];
}

export function toRow(spec: CollectionSpec, doc: Doc): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: doc.id,
    tenant: doc.tenant,
    agent: doc.agent,
    text: doc.text,
    vector: doc.vector,
    context: doc.context ?? null,
    [DOC_COLUMN]: docCell(spec, doc),
  };
  for (const field of Object.keys(spec.fields)) row[fieldColumn(field)] = toCell(doc.fields[field]);
  return row;
}

/** The `doc` column of a document: what `fromDocCell` reads back as `fromRow` would from the columns. */
export function docCell(spec: CollectionSpec, doc: Omit<StoredDoc, 'tenant' | 'agent' | 'id'>): string {
  const fields: Record<string, FieldValue> = {};
  for (const field of Object.keys(spec.fields)) {
    const value = doc.fields[field];
    if (value !== undefined && value !== null) fields[field] = value;
  }
  return JSON.stringify({ text: doc.text, ...(doc.context ? { context: doc.context } : {}), fields });
}

/** A document from its `doc` column; fields it does not hold (null, or added to the spec since) are null. */
export function fromDocCell(spec: CollectionSpec, scope: DocScope, id: string, cell: string): StoredDoc {
  const stored = JSON.parse(cell) as { text: string; context?: string; fields: Record<string, FieldValue> };
  const fields: Record<string, FieldValue> = {};
  for (const field of Object.keys(spec.fields)) fields[field] = stored.fields[field] ?? null;
  return {
    id,
    tenant: scope.tenant,
    agent: scope.agent,
    text: stored.text,
    ...(stored.context ? { context: stored.context } : {}),
    fields,
  };
}

export function toCell(value: FieldValue | undefined): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value ?? null;
}

function fromArrow(type: FieldType, value: unknown): FieldValue {
  if (value === null || value === undefined) return null;
  if (type === 'string[]') return Array.from(value as Iterable<string>);
  if (type === 'boolean') return value !== 0;
  return value as FieldValue;
}

export function fromRow(spec: CollectionSpec, row: Record<string, unknown>): StoredDoc {
  const fields: Record<string, FieldValue> = {};
  for (const [field, type] of Object.entries(spec.fields)) fields[field] = fromArrow(type, row[fieldColumn(field)]);
  const context = typeof row.context === 'string' && row.context.length > 0 ? { context: row.context } : {};
  return {
    id: row.id as string,
    tenant: row.tenant as string,
    agent: row.agent as string,
    text: row.text as string,
    ...context,
    fields,
  };
}

/** A document as reads return it (without its vector). */
export function storedOf(doc: Doc): StoredDoc {
  const { vector: _vector, ...stored } = doc;
  return stored;
}

/** The vector column of a row as a Float32Array (arrow returns a Vector). */
export function rowVector(row: Record<string, unknown>): Float32Array {
  const v = row.vector as { toArray(): Float32Array } | Float32Array | number[];
  if (v instanceof Float32Array) return v;
  if (Array.isArray(v)) return Float32Array.from(v);
  return Float32Array.from(v.toArray());
}

function columnData(field: Field, values: readonly unknown[]): Data {
  if (field.type instanceof FixedSizeList) return vectorData(field.type, values as readonly Float32Array[]);
  const vector = vectorFromArray(values as unknown[], field.type as DataType);
  return vector.data.length === 1
    ? vector.data[0]!
    : vectorFromArray([...vector] as unknown[], field.type as DataType).data[0]!;
}

/**
 * The vector column straight from the rows' Float32Arrays (arrow's element-wise builder is the slowest part of a
 * write).
 */
function vectorData(type: FixedSizeList, vectors: readonly Float32Array[]): Data {
  const size = type.listSize;
  const values = new Float32Array(vectors.length * size);
  vectors.forEach((v, i) => {
    values.set(v.length === size ? v : Float32Array.from(v).subarray(0, size), i * size);
  });
  const child = makeData({
    type: type.children[0]!.type as Float32,
    length: values.length,
    nullCount: 0,
    data: values,
  });
  return makeData({ type, length: vectors.length, nullCount: 0, child });
}

/** Builds an Arrow table with exactly the table's schema (field order, nullability, metadata). */
export function toArrowTable(schema: Schema, rows: readonly Record<string, unknown>[]): Table {
  const children = schema.fields.map((field) =>
    columnData(
      field,
      rows.map((r) => r[field.name]),
    ),
  );
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new Table(schema, [new RecordBatch(schema, data)]);
}
