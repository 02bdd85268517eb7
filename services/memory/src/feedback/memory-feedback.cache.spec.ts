import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { counterKey, InProcessBus, KvCounters, type Counters } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { FileKvStore } from '#files';
import { LanceDbStore } from '#vector-store';
import { subscribeCacheInvalidation } from '../memory-cache.invalidation.js';
import { BusMemoryHistory } from '../memory-events.js';
import { openMemoryChanges } from '../memory-changes.js';
import { MemoryRepository, memoryCollectionSpec } from '../memory.repository.js';
import { MemoryService } from '../memory.service.js';
import { MemoryFeedbackRepository } from './memory-feedback.repository.js';
import { MemoryFeedbackService } from './memory-feedback.service.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Counters that count their listings: how often the repository read a scope's counts instead of its cache. */
function countingLists(inner: Counters): Counters & { lists: number } {
  const counting = Object.create(inner) as Counters & { lists: number };
  counting.lists = 0;
  counting.list = (...segments: string[]) => {
    counting.lists++;
    return inner.list(...segments);
  };
  return counting;
}

/** Two instances sharing one store, one bus and one counters folder: a report through one is seen by the other. */
describe(`${MemoryFeedbackService.name} counts cache`, () => {
  let dir: string;
  let bus: InProcessBus;
  let store: LanceDbStore;
  const closers: Array<() => Promise<void>> = [];
  const embedder = new HashingEmbedder({ dimension: 32 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-fbcache-'));
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quiet });
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function instance() {
    const memoryRepo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    const counters = countingLists(new KvCounters(new FileKvStore(join(dir, 'counters'))));
    const repo = new MemoryFeedbackRepository(counters);
    const changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: memoryRepo }, quiet, [
      memoryRepo.collection.journal!,
    ]);
    closers.unshift(() => changes.close());
    const memories = new MemoryService(memoryRepo, embedder, changes, new BusMemoryHistory(bus));
    const feedback = new MemoryFeedbackService(memories, repo, changes);
    const sub = await subscribeCacheInvalidation(bus, repo, ['feedback']);
    closers.push(() => sub.close());
    return { memories, feedback, repo, counters };
  }

  it('should show counts reported through another instance on the next read', async () => {
    const a = await instance();
    const b = await instance();
    const m = await a.memories.create(scope, { content: 'prefers tabs', importance: 0.5, tags: [] }, 'daily');
    expect((await b.feedback.get(scope, m.id)).feedback).toBeUndefined();
    await a.feedback.rate(scope, m.id, { helpful: true });
    expect((await b.feedback.get(scope, m.id)).feedback).toEqual({ helpful: 1, unhelpful: 0 });
    await b.feedback.rate(scope, m.id, { helpful: false });
    expect((await a.feedback.get(scope, m.id)).feedback).toEqual({ helpful: 1, unhelpful: 1 });
  });

  it("should read a scope's counts once for any number of reads until a report changes them", async () => {
    const a = await instance();
    const other = { tenant: 't1', agent: 'jarvis' };
    const [m1, m2] = await Promise.all(
      ['likes tea', 'likes coffee'].map((content) =>
        a.memories.create(other, { content, importance: 0.5, tags: [] }, 'daily'),
      ),
    );
    await a.feedback.rate(other, m1!.id, { helpful: true });
    const before = a.counters.lists;

    const reads = await Promise.all([
      a.repo.getMany(other, [m1!.id, m2!.id]),
      a.repo.getMany(other, [m2!.id]),
      a.repo.get(other, m1!.id),
    ]);
    await a.repo.getMany(other, [m1!.id, m2!.id, 'never-rated']);
    const listed = a.counters.lists - before;

    expect(reads[0]).toEqual(new Map([[m1!.id, { helpful: 1, unhelpful: 0 }]]));
    expect(reads[2]).toEqual({ helpful: 1, unhelpful: 0 });
    // Three concurrent first reads may each list; the read after them is served from the cache.
    expect(listed).toBeGreaterThanOrEqual(1);
    expect(listed).toBeLessThanOrEqual(3);

    await a.feedback.rate(other, m2!.id, { helpful: false });
    expect(await a.repo.getMany(other, [m1!.id, m2!.id])).toEqual(
      new Map([
        [m1!.id, { helpful: 1, unhelpful: 0 }],
        [m2!.id, { helpful: 0, unhelpful: 1 }],
      ]),
    );
    expect(a.counters.lists - before).toBe(listed + 1);
  });

  it('should keep counts in the counters folder, by memory, under the scope', async () => {
    const a = await instance();
    const m = await a.memories.create(scope, { content: 'uses vim', importance: 0.5, tags: [] }, 'daily');
    await a.feedback.rate(scope, m.id, { helpful: true });

    const stored = await new KvCounters(new FileKvStore(join(dir, 'counters'))).list('memory-feedback', 't1', 'alfred');

    expect(stored.get(counterKey('memory-feedback', 't1', 'alfred', m.id))).toEqual({ helpful: 1, unhelpful: 0 });
  });
});
