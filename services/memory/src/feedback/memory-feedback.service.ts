import {
  MemoryEvents,
  MemoryListQuery,
  type FeedbackBody,
  type FeedbackCounts,
  type FeedbackResult,
  type Memory,
  type Scope,
} from '#contracts';
import type { ChangeEvent, ChangeWriter } from '#durable';
import type { MemoryService } from '../memory.service.js';
import { KeyedLock } from './keyed-lock.js';
import type { MemoryFeedbackRepository } from './memory-feedback.repository.js';

/**
 * The learning loop on memories: feedback is counted per memory, recorded on the memory event stream, shown
 * in the memory's record and applied to search ranking (#ranking's feedback signal, in MemorySearch). Reads go through
 * here so every answer carries the counts.
 */
export class MemoryFeedbackService {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly memories: MemoryService,
    private readonly repo: MemoryFeedbackRepository,
    private readonly changes: ChangeWriter,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Deletes every memory of the agent (each with its change event, like any delete) and their feedback counts. */
  async purge(scope: Scope): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.memories.list(scope, MemoryListQuery.parse({ limit: 100 }));
      if (page.memories.length === 0) break;
      const res = await this.memories.batchDelete(
        scope,
        page.memories.map((m) => m.id),
      );
      deleted += res.deleted;
      if (res.deleted === 0) break;
    }
    await this.repo.purge(scope);
    return deleted;
  }

  /**
   * Counts one report; a memory of another agent (or none) is NOT_FOUND. Serialised per memory in this instance;
   * across instances the counters' compare-and-set makes each increment atomic (no report overwrites another). The
   * event carries the counts the increment produced: made from its result (see ChangeEvents).
   */
  rate(scope: Scope, id: string, body: FeedbackBody): Promise<FeedbackResult> {
    return this.lock.run(`${scope.tenant}\u0000${scope.agent}\u0000${id}`, async () => {
      await this.memories.get(scope, id);
      const at = this.now().toISOString();
      const delta = { helpful: body.helpful ? 1 : 0, unhelpful: body.helpful ? 0 : 1 };
      const after = await this.changes.apply(
        (counts) => [this.event(scope, id, body, counts, at)],
        () => this.repo.increment(scope, id, delta),
      );
      return { id, feedback: after, timestamp: at };
    });
  }

  async get(scope: Scope, id: string): Promise<Memory> {
    const memory = await this.memories.get(scope, id);
    return attach(memory, await this.repo.get(scope, id));
  }

  async list(scope: Scope, query: MemoryListQuery) {
    const page = await this.memories.list(scope, query);
    const counts = await this.repo.getMany(
      scope,
      page.memories.map((m) => m.id),
    );
    return { ...page, memories: page.memories.map((m) => attach(m, counts.get(m.id))) };
  }

  private event(scope: Scope, id: string, body: FeedbackBody, counts: FeedbackCounts, at: string): ChangeEvent {
    const change = {
      kind: 'feedback' as const,
      id,
      tenant: scope.tenant,
      agent: scope.agent,
      version: counts.helpful + counts.unhelpful,
      at,
      feedback: { helpful: body.helpful, ...(body.note ? { note: body.note } : {}), counts },
    };
    // Every report is its own event (the outbox gives it a message id of its own): equal reports are never
    // deduplicated.
    return { event: MemoryEvents.feedback, payload: change, key: id };
  }
}

function attach<M extends Memory>(memory: M, counts: FeedbackCounts | undefined): M {
  return counts ? { ...memory, feedback: counts } : memory;
}
