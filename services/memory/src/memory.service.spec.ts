import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '#bus';
import { HashingEmbedder } from '#embeddings';
import { LanceDbStore } from '#vector-store';
import { AlfredError } from '#errors';
import { MemoryRoutes } from '#contracts';
import { BusMemoryEventLog, type MemoryEventLog } from './memory-events.js';
import { MemoryRepository, memoryCollectionSpec } from './memory.repository.js';
import { MemoryService } from './memory.service.js';

const scope = { tenant: 't1', agent: 'alfred' };
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

describe(MemoryService.name, () => {
  let dir: string;
  let store: LanceDbStore;
  let bus: InProcessBus;
  let repo: MemoryRepository;
  let events: MemoryEventLog;
  let service: MemoryService;
  const embedder = new HashingEmbedder({ dimension: 64 });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-memory-'));
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
    bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quietLogger });
    repo = new MemoryRepository(await store.open(memoryCollectionSpec(embedder.id, embedder.dimension)));
    events = new BusMemoryEventLog(bus);
    service = new MemoryService(repo, embedder, events);
  });

  afterEach(async () => {
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('create', () => {
    it('should store a daily memory and record a created event', async () => {
      const m = await service.create(scope, { content: 'likes tea', importance: 0.7, tags: ['drink', 'drink'] }, 'daily');
      expect(m.tags).toEqual(['drink']);
      expect(await service.get(scope, m.id)).toMatchObject({ content: 'likes tea', source: 'daily', date: m.timestamp.slice(0, 10) });
      expect((await events.history(m.id)).map((c) => c.kind)).toEqual(['created']);
    });

    it('should abandon, not commit, a create whose caller gave up while it was embedding (deadline across the bus)', async () => {
      let embedded!: () => void;
      const done = new Promise<void>((resolve) => (embedded = resolve));
      const slow = { id: embedder.id, dimension: embedder.dimension, embed: async (texts: string[]) => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        embedded();
        return embedder.embed(texts);
      } } as unknown as HashingEmbedder;
      const patient = new MemoryService(repo, slow, events);
      const served = bus.serve(MemoryRoutes.create, (p) => patient.create(p.scope, p.memory, p.source));
      const call = bus.request(MemoryRoutes.create, { scope, memory: { content: 'too late' } }, { timeoutMs: 300 });
      await expect(call).rejects.toMatchObject({ code: 'SERVICE_TIMEOUT' });
      await done;
      await served.drain();
      expect((await service.list(scope, listAll)).pagination.total).toBe(0);
    });

    it('should recreate, not duplicate, a memory retried with the same Idempotency-Key after its answer was lost', async () => {
      const served = bus.serve(MemoryRoutes.create, (p) => service.create(p.scope, p.memory, p.source));
      const context = { correlationId: 'c', idempotencyKey: 'key-1' };
      const first = await bus.request(MemoryRoutes.create, { scope, memory: { content: 'once' } }, { context });
      const retry = await bus.request(MemoryRoutes.create, { scope, memory: { content: 'once' } }, { context: { ...context, correlationId: 'c2' } });
      const other = await bus.request(MemoryRoutes.create, { scope, memory: { content: 'once' } }, { context: { correlationId: 'c3' } });
      await served.drain();
      expect(retry.id).toBe(first.id);
      expect(other.id).not.toBe(first.id);
      expect((await service.list(scope, listAll)).pagination.total).toBe(2);
      expect((await events.history(first.id)).map((c) => c.kind)).toEqual(['created']);
    });

    it('should undo the write and refuse when the change cannot be recorded durably', async () => {
      const failing: MemoryEventLog = { record: () => Promise.reject(new Error('stream down')), history: () => Promise.resolve([]) };
      const fragile = new MemoryService(repo, embedder, failing);
      await expect(fragile.create(scope, { content: 'lost?', importance: 0.5, tags: [] }, 'daily')).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
      });
      expect((await service.list(scope, listAll)).pagination.total).toBe(0);
    });
  });

  describe('update', () => {
    it('should record the update made after an undone one (a new message id, not a dropped duplicate)', async () => {
      const m = await service.create(scope, { content: 'v1', importance: 0.5, tags: [] }, 'daily');
      let loseAck = true;
      // The stream stored the event but its acknowledgement was lost: the service undoes the update.
      const flaky: MemoryEventLog = {
        record: async (c) => {
          await events.record(c);
          if (loseAck) throw new Error(((loseAck = false), 'ack lost'));
        },
        history: (id) => events.history(id),
      };
      const svc = new MemoryService(repo, embedder, flaky);
      await expect(svc.update(scope, m.id, { content: 'v2 (undone)' })).rejects.toBeInstanceOf(AlfredError);
      await svc.update(scope, m.id, { content: 'v2' });
      const history = (await events.history(m.id)).map((c) => [c.kind, c.version, c.memory?.content]);
      expect(history.at(-1)).toEqual(['updated', 2, 'v2']);
    });

    it('should keep the previous content when recording the update fails', async () => {
      const m = await service.create(scope, { content: 'original', importance: 0.5, tags: [] }, 'daily');
      const failing: MemoryEventLog = { record: () => Promise.reject(new Error('stream down')), history: () => Promise.resolve([]) };
      await expect(new MemoryService(repo, embedder, failing).update(scope, m.id, { content: 'changed' })).rejects.toBeInstanceOf(AlfredError);
      expect((await service.get(scope, m.id)).content).toBe('original');
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
      const other = new MemoryService(repo, embedder, events);
      await other.update(scope, m.id, { content: 'changed elsewhere' });
      expect((await service.get(scope, m.id)).content).toBe('cached');
      expect((await other.get(scope, m.id)).content).toBe('changed elsewhere');
    });
  });

  describe('batchCreate', () => {
    it('should create valid items in one pass and report invalid ones by index', async () => {
      const result = await service.batchCreate(scope, [{ content: 'ok' }, { content: 5 }, { content: 'fine', importance: 7 }], 'memory');
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
