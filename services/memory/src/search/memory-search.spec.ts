import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus, KvCounters } from '#bus';
import { FileKvStore } from '#files';
import { HashingEmbedder } from '#embeddings';
import { memoryProfile, Ranker } from '#ranking';
import { generatedText, LanceDbStore, prng } from '#vector-store';
import { MemoryFeedbackRepository } from '../feedback/memory-feedback.repository.js';
import { MemoryFeedbackService } from '../feedback/memory-feedback.service.js';
import { BusMemoryHistory } from '../memory-events.js';
import { openMemoryChanges } from '../memory-changes.js';
import type { DurableChanges } from '#durable';
import { MemoryRepository, memoryCollectionSpec } from '../memory.repository.js';
import { MemoryService } from '../memory.service.js';
import { MemorySearch } from './memory-search.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const query = (
  q: string,
  more: Partial<{ limit: number; min_score: number; explain: boolean; source: 'daily' | 'memory' }> = {},
) => ({
  q,
  limit: 10,
  min_score: 0,
  explain: false,
  ...more,
});

describe(MemorySearch.name, () => {
  let dir: string;
  let store: LanceDbStore;
  let bus: InProcessBus;
  let memories: MemoryService;
  let feedback: MemoryFeedbackService;
  let search: MemorySearch;
  let changes: DurableChanges;
  const embedder = new HashingEmbedder({ dimension: 64 });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-search-'));
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quiet });
    const repo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    const counts = new MemoryFeedbackRepository(new KvCounters(new FileKvStore(join(dir, 'counters'))));
    changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: repo }, quiet, [repo.collection.journal!]);
    memories = new MemoryService(repo, embedder, changes, new BusMemoryHistory(bus));
    feedback = new MemoryFeedbackService(memories, counts, changes);
    // A fixed clock: recency would otherwise move scores between two searches of one test.
    const now = Date.now();
    search = new MemorySearch(repo, counts, embedder, new Ranker(memoryProfile(embedder.kind), () => now));
  });

  afterEach(async () => {
    await changes.close();
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should rank by relevance with importance as a gentle boost and honour min_score', async () => {
    await memories.batchCreate(
      scope,
      [
        { content: 'deploys go through the staging cluster first', importance: 0.2 },
        { content: 'deploys go through the staging cluster first', importance: 1.0 },
        { content: 'favourite colour is green', importance: 1.0 },
      ],
      'daily',
    );
    const res = await search.search(scope, query('staging deploys'));
    // The third matches only through its neighbours (written in the same sitting), below both direct matches.
    expect(res.results.map((r) => r.importance)).toEqual([1, 0.2, 1]);
    expect(res.results[0]!.score).toBeGreaterThan(res.results[1]!.score);
    expect(res.results[2]!.score).toBeLessThan(res.results[1]!.score);
    expect(res.total).toBe(3);
    const strict = await search.search(scope, query('staging deploys', { min_score: res.results[1]!.score + 1e-6 }));
    expect(strict.results.map((r) => r.importance)).toEqual([1]);
    expect(strict.total).toBe(1);
  });

  it('should move a memory up after helpful feedback and show its counts', async () => {
    const {
      memories: [a, b],
    } = await memories.batchCreate(
      scope,
      [{ content: 'the build uses pnpm workspaces' }, { content: 'the build uses pnpm workspaces' }],
      'daily',
    );
    const before = await search.search(scope, query('pnpm build'));
    const second = before.results[1]!.id;
    await feedback.rate(scope, second, { helpful: true });
    const after = await search.search(scope, query('pnpm build'));
    expect(after.results[0]).toMatchObject({ id: second, feedback: { helpful: 1, unhelpful: 0 } });
    expect([a!.id, b!.id]).toContain(second);
  });

  it('should filter by source and explain scores on request', async () => {
    await memories.create(scope, { content: 'espresso every morning', importance: 0.5, tags: [] }, 'daily');
    await memories.create(scope, { content: 'espresso is the user favourite', importance: 0.5, tags: [] }, 'memory');
    const res = await search.search(scope, query('espresso', { source: 'memory', explain: true }));
    expect(res.results.map((r) => r.source)).toEqual(['memory']);
    const { score, explanation } = res.results[0]!;
    expect(explanation!.map((c) => c.signal)).toEqual(['lexical', 'importance', 'recency']);
    expect(explanation!.reduce((s, c) => s + c.contribution, 0)).toBeCloseTo(score, 9);
    expect((await search.search(scope, query('espresso'))).results[0]!.explanation).toBeUndefined();
  });

  it('should find a memory through the ones written around it (contextual neighbours)', async () => {
    await memories.batchCreate(
      scope,
      [
        { content: 'Caroline: I went to the adoption agency yesterday' },
        { content: 'Melanie: How did it go?' },
        { content: 'Caroline: They were kind, the paperwork starts next month' },
        { content: 'Melanie: I painted a lake sunrise last week' },
      ],
      'daily',
    );
    const res = await search.search(scope, query('adoption paperwork'));
    const byContent = new Map(res.results.map((r) => [r.content, r.score]));
    expect(res.results[0]!.content).toMatch(/paperwork|adoption/);
    // "How did it go?" shares no word with the query: its neighbours carry it above the unrelated last line.
    expect(byContent.get('Melanie: How did it go?')).toBeGreaterThan(
      byContent.get('Melanie: I painted a lake sunrise last week') ?? 0,
    );
  });

  it("should give an agent the same results and scores with and without a large neighbour's data", async () => {
    const random = prng(3);
    const mine = Array.from({ length: 60 }, () => ({ content: generatedText(random) }));
    await memories.batchCreate(scope, mine, 'daily');
    const questions = [
      'user deploy server',
      'memory agent skill tokyo',
      'coffee travel berlin',
      mine[7]!.content.split(' ').slice(0, 4).join(' '),
    ];
    const alone = await Promise.all(questions.map((q) => search.search(scope, query(q))));
    const neighbour = { tenant: 't1', agent: 'jarvis' };
    for (let i = 0; i < 2; i++) {
      await memories.batchCreate(
        neighbour,
        Array.from({ length: 500 }, () => ({ content: `${generatedText(random)} user deploy coffee` })),
        'daily',
      );
    }
    const beside = await Promise.all(questions.map((q) => search.search(scope, query(q))));
    const view = (r: Awaited<ReturnType<MemorySearch['search']>>) => ({
      total: r.total,
      hits: r.results.map((h) => [h.id, h.score]),
    });
    expect(beside.map(view)).toEqual(alone.map(view));
    expect(alone.every((r) => r.results.length > 0)).toBe(true);
    expect((await search.search(neighbour, query('user deploy coffee'))).total).toBe(1000);
  }, 60_000);
});
