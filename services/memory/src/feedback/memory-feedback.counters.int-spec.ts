import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { InProcessBus, NatsBus, KvCounters, NatsKvStore } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { describeWithNats, testServers } from '#testing';
import { LanceDbStore } from '#vector-store';
import { BusMemoryHistory } from '../memory-events.js';
import { openMemoryChanges } from '../memory-changes.js';
import { MemoryRepository, memoryCollectionSpec } from '../memory.repository.js';
import { MemoryService } from '../memory.service.js';
import { MemoryFeedbackRepository } from './memory-feedback.repository.js';
import { MemoryFeedbackService } from './memory-feedback.service.js';

const describeNats = await describeWithNats();
const scope = { tenant: 't1', agent: 'alfred' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Two memory instances (each with its own in-process lock, as two processes have) over one vector store and one NATS
 * KV counter bucket, each on its own NATS connection: concurrent reports through both must all be counted.
 */
describeNats(`${MemoryFeedbackService.name} with shared counters`, () => {
  let dir: string;
  const outboxes: Array<{ close(): Promise<void> }> = [];
  let bus: InProcessBus;
  let store: LanceDbStore;
  let nats: NatsBus[];
  let bucket: string;
  const embedder = new HashingEmbedder({ dimension: 32 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-fbcount-'));
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quiet });
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
    bucket = `counters-fb-${randomUUID().slice(0, 8)}`;
    nats = await Promise.all(
      [1, 2].map((n) => NatsBus.connect({ url: testServers.natsUrl, name: `fb-${n}`, logger: quiet })),
    );
  });
  afterAll(async () => {
    for (const o of outboxes) await o.close();
    await new Kvm(nats[0]!.nc).open(bucket).then(
      (kv) => kv.destroy(),
      () => undefined,
    );
    await Promise.all(nats.map((n) => n.close(2_000)));
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function instance(
    nc: NatsBus,
  ): Promise<{ memories: MemoryService; feedback: MemoryFeedbackService; repo: MemoryFeedbackRepository }> {
    const memoryRepo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    const changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: memoryRepo }, quiet, [
      memoryRepo.collection.journal!,
    ]);
    outboxes.push(changes);
    const memories = new MemoryService(memoryRepo, embedder, changes, new BusMemoryHistory(bus));
    const counters = new KvCounters(new NatsKvStore(nc.nc, bucket));
    const repo = new MemoryFeedbackRepository(counters);
    return { memories, repo, feedback: new MemoryFeedbackService(memories, repo, changes) };
  }

  it('should count all 30 concurrent reports made through two instances', async () => {
    const a = await instance(nats[0]!);
    const b = await instance(nats[1]!);
    const m = await a.memories.create(scope, { content: 'prefers tabs', importance: 0.5, tags: [] }, 'daily');

    const reports = Array.from({ length: 15 }, (_, i) => [
      a.feedback.rate(scope, m.id, { helpful: true }),
      b.feedback.rate(scope, m.id, { helpful: i % 3 === 0 }),
    ]);
    const results = await Promise.all(reports.flat());

    expect((await b.feedback.get(scope, m.id)).feedback).toEqual({ helpful: 20, unhelpful: 10 });
    // Every report saw its own total: no two answered the same count.
    expect(new Set(results.map((r) => r.feedback.helpful + r.feedback.unhelpful)).size).toBe(30);
  });

  it('should forget the counts of a purged agent', async () => {
    const a = await instance(nats[0]!);
    const m = await a.memories.create(scope, { content: 'likes tea', importance: 0.5, tags: [] }, 'daily');
    await a.feedback.rate(scope, m.id, { helpful: true });

    expect(await a.repo.get(scope, m.id)).toEqual({ helpful: 1, unhelpful: 0 });

    await a.feedback.purge(scope);

    expect(await a.repo.get(scope, m.id)).toBeUndefined();
  });
});
