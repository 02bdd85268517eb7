import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LanceDbStore, type CollectionSpec } from '#vector-store';
import { MemoryRepository, memoryCollectionSpec } from '../memory.repository.js';
import { PROVENANCE_FIELDS } from './provenance-fields.js';
import { LEGACY_PROVENANCE_COLLECTION, LEGACY_SPEC, migrateProvenance } from './provenance-migration.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quiet = { info: () => undefined };

/** The memories collection as it was before provenance became fields of the record. */
function oldMemorySpec(): CollectionSpec {
  const spec = memoryCollectionSpec('hash-test', 4);
  const fields = Object.fromEntries(Object.entries(spec.fields).filter(([f]) => !(f in PROVENANCE_FIELDS)));
  return { ...spec, fields };
}

describe(migrateProvenance.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-provenance-migration-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('should move each provenance row into its memory, leave the rest unmarked, drop the old collection', async () => {
    const old = new LanceDbStore({ dir });
    const memories = await old.open(oldMemorySpec());
    const memory = (id: string, content: string) => ({
      ...scope,
      id,
      text: content,
      vector: new Float32Array([1, 0, 0, 0]),
      fields: {
        importance: 0.5,
        tags: [],
        source: 'daily',
        date: '2026-01-01',
        timestamp: `2026-01-01T00:00:0${id.length}Z`,
        updated_at: null,
        version: 1,
      },
    });
    await memories.upsert([
      memory('m1', 'written by a turn'),
      memory('m22', 'flagged one'),
      memory('m333', 'from before provenance'),
    ]);
    const legacy = await old.open(LEGACY_SPEC);
    const row = (id: string, fields: Record<string, unknown>) => ({
      ...scope,
      id,
      text: id,
      vector: new Float32Array(8).fill(0.25),
      fields: {
        session: null,
        turn: null,
        key: null,
        via: null,
        source: null,
        flagged: false,
        reasons: [],
        written_at: '2026-01-01T00:00:01Z',
        ...fields,
      } as never,
    });
    await legacy.upsert([
      row('m1', { session: 's1', turn: '3', via: 'tool:bash' }),
      row('m22', { key: 'open-loopback', via: 'rest', flagged: true, reasons: ['instruction/x at 0'] }),
    ]);
    await old.close();

    const store = new LanceDbStore({ dir });
    const repo = new MemoryRepository(await store.open(memoryCollectionSpec('hash-test', 4)));
    await migrateProvenance(store, [repo.collection], quiet);
    expect(await store.describe(LEGACY_PROVENANCE_COLLECTION)).toBeUndefined();
    expect((await repo.get(scope, 'm1'))?.written).toEqual({
      writer: { session: 's1', turn: '3', via: 'tool:bash' },
      written_at: '2026-01-01T00:00:01Z',
      trust: { flagged: false, reasons: [] },
    });
    expect((await repo.get(scope, 'm22'))?.written?.trust).toEqual({ flagged: true, reasons: ['instruction/x at 0'] });
    expect((await repo.get(scope, 'm333'))?.written).toBeUndefined();
    const list = (q: Record<string, unknown>) =>
      repo
        .list(scope, { limit: 10, offset: 0, sort_by: 'date', sort_order: 'asc', ...q } as never)
        .then((r) => r.records.map((m) => m.id));
    expect(await list({ flagged: false })).toEqual(['m1', 'm333']);
    expect(await list({ flagged: true })).toEqual(['m22']);
    expect(await list({ written_via: 'tool:bash' })).toEqual(['m1']);
    // A second start finds nothing to move.
    await migrateProvenance(store, [repo.collection], quiet);
    await store.close();
  });
});
