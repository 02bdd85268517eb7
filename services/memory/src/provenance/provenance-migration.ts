import type { Logger } from '#logging';
import type { Collection, CollectionSpec, FieldUpdate, StoredDoc, VectorStore } from '#vector-store';
import { provenanceFields } from './provenance-fields.js';

/** Where provenance rows lived before they were fields of their records. */
export const LEGACY_PROVENANCE_COLLECTION = 'memory_provenance';

/** The old collection's shape, to read its rows (and to make one in tests). */
export const LEGACY_SPEC: CollectionSpec = {
  name: LEGACY_PROVENANCE_COLLECTION,
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

const PAGE = 1_000;
const keyOf = (d: { tenant: string; agent: string; id: string }) => `${d.tenant}\u0000${d.agent}\u0000${d.id}`;

/**
 * Moves the rows of the old provenance collection into the fields of the records they describe (memories,
 * checkpoints, remediations), then drops it. Runs at start while the old collection exists; idempotent, so a start
 * interrupted half-way finishes the move next time (the collection goes last).
 */
export async function migrateProvenance(
  store: VectorStore,
  records: readonly Collection[],
  logger: Pick<Logger, 'info'>,
): Promise<void> {
  if ((await store.describe(LEGACY_PROVENANCE_COLLECTION)) === undefined) return;
  const legacy = await store.open(LEGACY_SPEC);
  const rows = new Map<string, StoredDoc>();
  for await (const page of legacy.scanAll(PAGE)) for (const d of page) rows.set(keyOf(d), d);
  let moved = 0;
  for (const collection of records) {
    const updates: FieldUpdate[] = [];
    for await (const page of collection.scanAll(PAGE)) {
      for (const d of page) {
        const row = rows.get(keyOf(d));
        if (row && d.fields.written_at === null)
          updates.push({ tenant: d.tenant, agent: d.agent, id: d.id, fields: fieldsOf(row) });
      }
    }
    for (let i = 0; i < updates.length; i += PAGE) await collection.setFields(updates.slice(i, i + PAGE));
    moved += updates.length;
  }
  await store.drop(LEGACY_PROVENANCE_COLLECTION);
  logger.info(
    { rows: rows.size, moved },
    'provenance moved into the records it describes; the old collection is dropped',
  );
}

function fieldsOf(row: StoredDoc) {
  const f = row.fields;
  const text = (k: string) => (typeof f[k] === 'string' && f[k] ? (f[k] as string) : undefined);
  const writer = Object.fromEntries(
    ['session', 'turn', 'key', 'via', 'source'].flatMap((k) => (text(k) ? [[k, text(k)!]] : [])),
  );
  return provenanceFields({
    writer,
    written_at: String(f.written_at),
    trust: { flagged: f.flagged === true, reasons: Array.isArray(f.reasons) ? f.reasons.map(String) : [] },
  });
}
