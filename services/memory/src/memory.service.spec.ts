import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { LanceDbStore } from '#vector-store';
import { MemoryRoutes } from '#contracts';
import { gate } from '#testing';
import { BusMemoryHistory } from './memory-events.js';
import { openMemoryChanges } from './memory-changes.js';
import type { DurableChanges } from '#durable';
import { MemoryRepository, memoryCollectionSpec } from './memory.repository.js';
import { MemoryService } from './memory.service.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

describe(MemoryService.name, () => {
  let dir: string;
  let store: LanceDbStore;
  let bus: InProcessBus;
  let repo: MemoryRepository;
  let events: BusMemoryHistory;
  let changes: DurableChanges;
  let service: MemoryService;
  const embedder = new HashingEmbedder({ dimension: 64 });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-memory-'));
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quietLogger });
    repo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    events = new BusMemoryHistory(bus);
    changes = await openMemoryChanges(bus, join(dir, 'outbox'), { memories: repo }, quietLogger, [
      repo.collection.journal!,
    ]);
    service = new MemoryService(repo, embedder, changes, events);
  });

  afterEach(async () => {
    await changes.close();
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('create', () => {
    it('should store a daily memory and record a created event', async () => {
      const m = await service.create(
        scope,
        { content: 'likes tea', importance: 0.7, tags: ['drink', 'drink'] },
        'daily',
      );
      expect(m.tags).toEqual(['drink']);
      expect(await service.get(scope, m.id)).toMatchObject({
        content: 'likes tea',
        source: 'daily',
        date: m.timestamp.slice(0, 10),
      });
      expect((await events.history(m.id)).map((c) => c.kind)).toEqual(['created']);
    });

    it('should abandon, not commit, a create whose caller gave up mid-embedding (deadline over the bus)', async () => {
      let embedded!: () => void;
      const done = new Promise<void>((resolve) => (embedded = resolve));
      // The embedding finishes only once the caller has given up: its deadline has passed by then.
      const callerGaveUp = gate();
      const slow = {
        id: embedder.id,
        dimension: embedder.dimension,
        embed: async (texts: string[]) => {
          await callerGaveUp.promise;
          embedded();
          return embedder.embed(texts);
        },
      } as unknown as HashingEmbedder;
      const patient = new MemoryService(repo, slow, changes, events);
      const served = bus.serve(MemoryRoutes.create, (p) => patient.create(p.scope, p.memory, p.source));
      const call = bus.request(MemoryRoutes.create, { scope, memory: { content: 'too late' } }, { timeoutMs: 300 });
      await expect(call).rejects.toMatchObject({ code: 'SERVICE_TIMEOUT' });
      callerGaveUp.open();
      await done;
      await served.drain();
      expect((await service.list(scope, listAll)).pagination.total).toBe(0);
    });

    it('should recreate, not duplicate, a memory retried with its Idempotency-Key after a lost answer', async () => {
      const served = bus.serve(MemoryRoutes.create, (p) => service.create(p.scope, p.memory, p.source));
      const context = { correlationId: 'c', idempotencyKey: 'key-1' };
      const first = await bus.request(MemoryRoutes.create, { scope, memory: { content: 'once' } }, { context });
      const retry = await bus.request(
        MemoryRoutes.create,
        { scope, memory: { content: 'once' } },
        { context: { ...context, correlationId: 'c2' } },
      );
      const other = await bus.request(
        MemoryRoutes.create,
        { scope, memory: { content: 'once' } },
        { context: { correlationId: 'c3' } },
      );
      await served.drain();
      expect(retry.id).toBe(first.id);
      expect(other.id).not.toBe(first.id);
      expect((await service.list(scope, listAll)).pagination.total).toBe(2);
      expect((await events.history(first.id)).map((c) => c.kind)).toEqual(['created']);
    });

    it('should store nothing and record no event when the store write fails', async () => {
      await store.close();
      await expect(service.create(scope, { content: 'nowhere', importance: 0.5, tags: [] }, 'daily')).rejects.toThrow();
      store = new LanceDbStore({ dir: join(dir, 'vectors') });
      repo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
      expect((await new MemoryService(repo, embedder, changes, events).list(scope, listAll)).pagination.total).toBe(0);
      expect(changes.waiting).toBe(0);
    });
  });

  describe('update', () => {
    it('should record each update as its own event, even one equal to the one before', async () => {
      const m = await service.create(scope, { content: 'v1', importance: 0.5, tags: [] }, 'daily');
      await service.update(scope, m.id, { content: 'v2' });
      await service.update(scope, m.id, { content: 'v2' });
      const history = (await events.history(m.id)).map((c) => [c.kind, c.version, c.memory?.content]);
      expect(history).toEqual([
        ['created', 1, 'v1'],
        ['updated', 2, 'v2'],
        ['updated', 3, 'v2'],
      ]);
    });

    it('should bump the version with every change', async () => {
      const m = await service.create(scope, { content: 'a', importance: 0.5, tags: [] }, 'daily');
      await service.update(scope, m.id, { content: 'b' });
      await service.update(scope, m.id, { importance: 0.9 });
      const versions = (await events.history(m.id)).map((c) => c.version);
      expect(versions).toEqual([1, 2, 3]);
    });
  });

  describe('get', () => {
    it('should read the newest content after an update and 404 after a delete, though reads are cached', async () => {
      const m = await service.create(scope, { content: 'first', importance: 0.5, tags: [] }, 'daily');
      expect((await service.get(scope, m.id)).content).toBe('first');
      await service.update(scope, m.id, { content: 'second' });
      expect((await service.get(scope, m.id)).content).toBe('second');
      await service.batchDelete(scope, [m.id]);
      await expect(service.get(scope, m.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(service.get({ ...scope, agent: 'other' }, m.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('should serve the cached record and not the store when the store changed behind its back', async () => {
      const m = await service.create(scope, { content: 'cached', importance: 0.5, tags: [] }, 'daily');
      // A second service on the same store with its own cache stands in for another instance.
      const other = new MemoryService(repo, embedder, changes, events);
      await other.update(scope, m.id, { content: 'changed elsewhere' });
      expect((await service.get(scope, m.id)).content).toBe('cached');
      expect((await other.get(scope, m.id)).content).toBe('changed elsewhere');
    });
  });

  describe('batchCreate', () => {
    it('should create valid items in one pass and report invalid ones by index', async () => {
      const result = await service.batchCreate(
        scope,
        [{ content: 'ok' }, { content: 5 }, { content: 'fine', importance: 7 }],
        'memory',
      );
      expect(result.created).toBe(1);
      expect(result.errors.map((e) => e.index)).toEqual([1, 2]);
      expect(result.errors[1]!.error).toMatch(/importance/);
      expect((await service.list(scope, { ...listAll, source: 'memory' })).pagination.total).toBe(1);
    });
  });

  describe('history', () => {
    it('should be 404 for another agent', async () => {
      const m = await service.create(scope, { content: 'mine', importance: 0.5, tags: [] }, 'daily');
      await expect(service.history({ ...scope, agent: 'other' }, m.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });
});

const listAll = { limit: 100, offset: 0, sort_by: 'date' as const, sort_order: 'desc' as const };
