import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvCounters } from '#bus';
import { FileKvStore } from '#files';
import { LanceDbStore } from '#vector-store';
import { LEGACY_FEEDBACK_COLLECTION, moveFeedbackRows, openLegacyFeedback } from './memory-feedback.migration.js';
import { MemoryFeedbackRepository } from './memory-feedback.repository.js';

const alfred = { tenant: 't1', agent: 'alfred' };
const jarvis = { tenant: 't2', agent: 'jarvis' };

describe(moveFeedbackRows.name, () => {
  let dir: string;
  let store: LanceDbStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-fbmove-'));
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The collection as an earlier version made it: one row per rated memory, with the embedder's vectors. */
  async function earlierRows(
    rows: ReadonlyArray<{ scope: typeof alfred; id: string; helpful: number; unhelpful: number }>,
  ) {
    const legacy = await store.open({
      name: LEGACY_FEEDBACK_COLLECTION,
      embedderId: 'hashing-16',
      dimension: 16,
      fields: { helpful: 'number', unhelpful: 'number', updated_at: 'string' },
    });
    await legacy.upsert(
      rows.map((r) => ({
        id: r.id,
        ...r.scope,
        text: r.id,
        vector: new Float32Array(16).fill(0.25),
        fields: { helpful: r.helpful, unhelpful: r.unhelpful, updated_at: '2026-11-01T00:00:00.000Z' },
      })),
    );
  }

  it("should move every row's counts into the counters, keep counts made since, and drop the collection", async () => {
    await earlierRows([
      { scope: alfred, id: 'm1', helpful: 3, unhelpful: 1 },
      { scope: alfred, id: 'm2', helpful: 0, unhelpful: 2 },
      { scope: jarvis, id: 'm1', helpful: 5, unhelpful: 0 },
    ]);
    const repo = new MemoryFeedbackRepository(new KvCounters(new FileKvStore(join(dir, 'counters'))));
    await repo.increment(alfred, 'm2', { helpful: 1, unhelpful: 0 }); // counted since, by this version

    const legacy = await openLegacyFeedback(store);
    const moved = await moveFeedbackRows(store, legacy!, repo);

    expect(moved).toBe(3);
    expect(await repo.getMany(alfred, ['m1', 'm2'])).toEqual(
      new Map([
        ['m1', { helpful: 3, unhelpful: 1 }],
        ['m2', { helpful: 1, unhelpful: 0 }],
      ]),
    );
    expect(await repo.get(jarvis, 'm1')).toEqual({ helpful: 5, unhelpful: 0 });
    expect(await store.describe(LEGACY_FEEDBACK_COLLECTION)).toBeUndefined();
    expect(await openLegacyFeedback(store)).toBeUndefined();
  });

  it('should count a moved memory on from its earlier counts', async () => {
    await earlierRows([{ scope: alfred, id: 'm1', helpful: 2, unhelpful: 0 }]);
    const repo = new MemoryFeedbackRepository(new KvCounters(new FileKvStore(join(dir, 'counters'))));

    await moveFeedbackRows(store, (await openLegacyFeedback(store))!, repo);

    expect(await repo.increment(alfred, 'm1', { helpful: 0, unhelpful: 1 })).toEqual({ helpful: 2, unhelpful: 1 });
  });
});
