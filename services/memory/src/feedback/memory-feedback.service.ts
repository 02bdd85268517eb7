import {
  ErrorCode,
  MemoryEvents,
  MemoryListQuery,
  type FeedbackBody,
  type FeedbackCounts,
  type FeedbackResult,
  type Memory,
  type Scope,
} from '#contracts';
import type { Bus } from '#bus';
import { AlfredError } from '#errors';
import { randomUUID } from 'node:crypto';
import { ScopedCache } from '../memory-cache.js';
import type { MemoryService } from '../memory.service.js';
import { KeyedLock } from './keyed-lock.js';
import type { MemoryFeedbackRepository } from './memory-feedback.repository.js';

/**
 * The learning loop on memories: feedback is counted per memory, recorded on the memory event stream, shown
 * in the memory's record and applied to search ranking (#ranking's feedback signal, in MemorySearch). Reads go through here so
 * every answer carries the counts.
 */
export class MemoryFeedbackService {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly memories: MemoryService,
    private readonly repo: MemoryFeedbackRepository,
    private readonly bus: Bus,
    private readonly now: () => Date = () => new Date(),
    /** Counts (or their absence) of single reads; evicted on this instance's reports and on every feedback event. */
    readonly counts: ScopedCache<CachedCounts> = new ScopedCache<CachedCounts>(),
  ) {}

  /** Deletes every memory of the agent (each with its change event, like any delete) and their feedback counts. */
  async purge(scope: Scope): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.memories.list(scope, MemoryListQuery.parse({ limit: 100 }));
      if (page.memories.length === 0) break;
      const res = await this.memories.batchDelete(scope, page.memories.map((m) => m.id));
      deleted += res.deleted;
      if (res.deleted === 0) break;
    }
    await this.repo.purge(scope);
    return deleted;
  }

  /** Counts one report; a memory of another agent (or none) is NOT_FOUND. Serialised per memory in this instance. */
  rate(scope: Scope, id: string, body: FeedbackBody): Promise<FeedbackResult> {
    return this.lock.run(`${scope.tenant}\u0000${scope.agent}\u0000${id}`, async () => {
      await this.memories.get(scope, id);
      const before = await this.repo.get(scope, id);
      const counts: FeedbackCounts = {
        helpful: (before?.helpful ?? 0) + (body.helpful ? 1 : 0),
        unhelpful: (before?.unhelpful ?? 0) + (body.helpful ? 0 : 1),
      };
      const at = this.now().toISOString();
      try {
        await this.repo.save(scope, id, counts, at);
        await this.record(scope, id, body, counts, at);
      } catch (err) {
        await (before ? this.repo.save(scope, id, before, at) : this.repo.delete(scope, [id])).catch(() => undefined);
        throw new AlfredError(ErrorCode.ServiceUnavailable, 'the feedback could not be recorded durably and was not applied', undefined, {
          cause: err,
        });
      } finally {
        // After the write (or its undo): a read that overlapped it can no longer fill the cache with either.
        this.counts.evict(scope.tenant, scope.agent, id);
      }
      return { id, feedback: counts, timestamp: at };
    });
  }

  async get(scope: Scope, id: string): Promise<Memory> {
    const memory = await this.memories.get(scope, id);
    return attach(memory, await this.countsOf(scope, id));
  }

  private async countsOf(scope: Scope, id: string): Promise<FeedbackCounts | undefined> {
    const cached = this.counts.get(scope, id);
    if (cached) return cached.counts;
    const ticket = this.counts.ticket();
    const counts = await this.repo.get(scope, id);
    this.counts.fill(scope, { id, counts }, ticket);
    return counts;
  }

  async list(scope: Scope, query: MemoryListQuery) {
    const page = await this.memories.list(scope, query);
    const counts = await this.repo.getMany(scope, page.memories.map((m) => m.id));
    return { ...page, memories: page.memories.map((m) => attach(m, counts.get(m.id))) };
  }

  private record(scope: Scope, id: string, body: FeedbackBody, counts: FeedbackCounts, at: string): Promise<void> {
    const change = {
      kind: 'feedback' as const,
      id,
      tenant: scope.tenant,
      agent: scope.agent,
      version: counts.helpful + counts.unhelpful,
      at,
      feedback: { helpful: body.helpful, ...(body.note ? { note: body.note } : {}), counts },
    };
    // Every report is its own event: a random message id, so two equal reports are never deduplicated.
    return this.bus.publish(MemoryEvents.feedback, change, { key: id, msgId: `${id}:rated:${randomUUID()}` });
  }
}

interface CachedCounts {
  readonly id: string;
  readonly counts: FeedbackCounts | undefined;
}

function attach<M extends Memory>(memory: M, counts: FeedbackCounts | undefined): M {
  return counts ? { ...memory, feedback: counts } : memory;
}
