import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { LanceDbStore } from '#vector-store';
import { subscribeCacheInvalidation } from '../memory-cache.invalidation.js';
import { BusMemoryHistory } from '../memory-events.js';
import { openMemoryChanges } from '../memory-changes.js';
import { MemoryRepository, memoryCollectionSpec } from '../memory.repository.js';
import { MemoryService } from '../memory.service.js';
import { MemoryFeedbackRepository, memoryFeedbackCollectionSpec } from './memory-feedback.repository.js';
import { MemoryFeedbackService } from './memory-feedback.service.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Two instances sharing one store and one bus: a report through one is seen by the other's cached reads. */
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

  async function instance(): Promise<{ memories: MemoryService; feedback: MemoryFeedbackService }> {
    const memoryRepo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    const repo = new MemoryFeedbackRepository(
      await store.open(memoryFeedbackCollectionSpec(embedder.id, embedder.dimension)),
    );
    const changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: memoryRepo }, quiet, [
      memoryRepo.collection.journal!,
      repo.collection.journal!,
    ]);
    closers.unshift(() => changes.close());
    const memories = new MemoryService(memoryRepo, embedder, changes, new BusMemoryHistory(bus));
    const feedback = new MemoryFeedbackService(memories, repo, changes);
    const sub = await subscribeCacheInvalidation(bus, feedback.counts, ['feedback', 'deleted']);
    closers.push(() => sub.close());
    return { memories, feedback };
  }

  it('should show counts reported through another instance on the next read', async () => {
    const a = await instance();
    const b = await instance();
    const m = await a.memories.create(scope, { content: 'prefers tabs', importance: 0.5, tags: [] }, 'daily');
    expect((await b.feedback.get(scope, m.id)).feedback).toBeUndefined();
    expect(b.feedback.counts.size).toBe(1);
    await a.feedback.rate(scope, m.id, { helpful: true });
    expect((await b.feedback.get(scope, m.id)).feedback).toEqual({ helpful: 1, unhelpful: 0 });
    await b.feedback.rate(scope, m.id, { helpful: false });
    expect((await a.feedback.get(scope, m.id)).feedback).toEqual({ helpful: 1, unhelpful: 1 });
  });
});
