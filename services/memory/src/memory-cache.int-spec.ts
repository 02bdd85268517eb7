import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsBus } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { describeWithNats, pollUntil, testServers } from '#testing';
import { LanceDbStore } from '#vector-store';
import { MemoryCache } from './memory-cache.js';
import { subscribeCacheInvalidation } from './memory-cache.invalidation.js';
import { BusMemoryHistory } from './memory-events.js';
import { openMemoryChanges } from './memory-changes.js';
import { MemoryRepository, memoryCollectionSpec } from './memory.repository.js';
import { MemoryService } from './memory.service.js';

const describeNats = await describeWithNats();
const quiet = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: () => undefined };
const scope = { tenant: 't1', agent: 'alfred' };

describeNats(`${MemoryCache.name} over NATS`, () => {
  const embedder = new HashingEmbedder({ dimension: 64 });
  let dir: string;
  let store: LanceDbStore;
  let buses: NatsBus[];
  const outboxes: Array<{ close(): Promise<void> }> = [];
  let repo: MemoryRepository;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-memory-cache-'));
    store = new LanceDbStore({ dir });
    repo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    const subjectPrefix = `t-${randomUUID().slice(0, 8)}.`;
    buses = await Promise.all(
      ['a', 'b'].map((name) =>
        NatsBus.connect({ url: testServers.natsUrl, name: `memory-cache-${name}`, subjectPrefix, logger: quiet }),
      ),
    );
  });

  afterEach(async () => {
    for (const o of outboxes.splice(0)) await o.close();
    const jsm = await buses[0]!.jsm();
    for await (const name of jsm.streams.names())
      if (name.startsWith(buses[0]!.stream(''))) await jsm.streams.delete(name);
    await Promise.all(buses.map((b) => b.close(2_000)));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A memory service instance on its own NATS connection and cache, sharing the store like instances sharing Qdrant.
   */
  async function instance(bus: NatsBus, subscribed: boolean) {
    const cache = new MemoryCache();
    const subscription = subscribed ? await subscribeCacheInvalidation(bus, cache) : undefined;
    const changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: repo }, quiet, [
      repo.collection.journal!,
    ]);
    outboxes.push(changes);
    return { service: new MemoryService(repo, embedder, changes, new BusMemoryHistory(bus), { cache }), subscription };
  }

  it("should evict another instance's cached record when one instance updates or deletes it", async () => {
    const a = await instance(buses[0]!, true);
    const b = await instance(buses[1]!, true);
    const m = await a.service.create(scope, { content: 'before', importance: 0.5, tags: [] }, 'daily');
    expect((await b.service.get(scope, m.id)).content).toBe('before');
    await a.service.update(scope, m.id, { content: 'after' });
    await pollUntil(
      async () => (await b.service.get(scope, m.id)).content === 'after',
      2_000,
      "b's read to show the update",
    );
    await a.service.delete(scope, m.id);
    await pollUntil(
      () =>
        b.service.get(scope, m.id).then(
          () => false,
          (err: { code?: string }) => err.code === 'NOT_FOUND',
        ),
      2_000,
      "b's read to show the delete",
    );
    await Promise.all([a.subscription?.close(), b.subscription?.close()]);
  });

  it('should keep serving the stale record without the subscription (the control: eviction is the fix)', async () => {
    const a = await instance(buses[0]!, true);
    const b = await instance(buses[1]!, false);
    const m = await a.service.create(scope, { content: 'before', importance: 0.5, tags: [] }, 'daily');
    expect((await b.service.get(scope, m.id)).content).toBe('before');
    await a.service.update(scope, m.id, { content: 'after' });
    await pollUntil(
      async () => (await a.service.get(scope, m.id)).content === 'after',
      2_000,
      "a's own read to show the update",
    );
    await buses[1]!.nc.flush();
    expect((await b.service.get(scope, m.id)).content).toBe('before');
    await a.subscription?.close();
  });
});
