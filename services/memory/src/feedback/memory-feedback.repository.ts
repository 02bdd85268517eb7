import type { FeedbackCounts, Scope } from '#contracts';
import { counterKey, type CounterValues, type Counters } from '#bus';
import { ScopedCache } from '../memory-cache.js';

/** A scope's rated memories with their counts, by counter key: what one listing of the scope's counters returned. */
interface ScopeCounts {
  readonly id: '';
  readonly counts: ReadonlyMap<string, CounterValues>;
}

/**
 * Feedback counts of memories, by memory id, in the memory's tenant and agent: counters on the key-value port
 * (distributed, the NATS KV bucket every instance increments by compare-and-set; embedded, files under the data dir).
 * Reads go through a per-scope cache filled by one listing of the scope's counters (only rated memories have any, so
 * a search reads none of its unrated candidates); a report of this instance and every feedback or delete event of
 * any instance evicts the scope (subscribe `evict` to them), and an entry is read again after a minute at most.
 */
export class MemoryFeedbackRepository {
  private readonly scopes: ScopedCache<ScopeCounts>;

  constructor(
    private readonly counters: Counters,
    options: { readonly capacity?: number } = {},
  ) {
    this.scopes = new ScopedCache<ScopeCounts>({ capacity: options.capacity ?? 4_096 });
  }

  async get(scope: Scope, id: string): Promise<FeedbackCounts | undefined> {
    return (await this.getMany(scope, [id])).get(id);
  }

  async getMany(scope: Scope, ids: readonly string[]): Promise<Map<string, FeedbackCounts>> {
    if (ids.length === 0) return new Map();
    const counts = await this.scopeCounts(scope);
    const out = new Map<string, FeedbackCounts>();
    for (const id of ids) {
      const values = counts.get(key(scope, id));
      if (values) out.set(id, fromCounters(values));
    }
    return out;
  }

  /** Adds one report, atomically across instances; answers the totals after it. */
  async increment(scope: Scope, id: string, delta: FeedbackCounts): Promise<FeedbackCounts> {
    try {
      return fromCounters(await this.counters.add(key(scope, id), { ...delta }));
    } finally {
      // After the write: a listing that overlapped it can no longer fill the cache with the counts before it.
      this.evict(scope.tenant, scope.agent);
    }
  }

  /** Drops the cached counts of the scope (a change of any memory in it, from this or another instance). */
  evict(tenant: string, agent: string, _id?: string): void {
    this.scopes.evict(tenant, agent, '');
  }

  async purge(scope: Scope): Promise<void> {
    try {
      await this.counters.deletePrefix(...prefix(scope));
    } finally {
      this.evict(scope.tenant, scope.agent);
    }
  }

  /** Counts moved from an earlier layout: a memory counted since keeps its counters. */
  async adopt(scope: Scope, id: string, counts: FeedbackCounts): Promise<void> {
    await this.counters.add(key(scope, id), {}, async () => ({ ...counts }));
    this.evict(scope.tenant, scope.agent);
  }

  private async scopeCounts(scope: Scope): Promise<ReadonlyMap<string, CounterValues>> {
    const cached = this.scopes.get(scope, '');
    if (cached) return cached.counts;
    const ticket = this.scopes.ticket();
    const counts = await this.counters.list(...prefix(scope));
    this.scopes.fill(scope, { id: '', counts }, ticket);
    return counts;
  }
}

const prefix = (scope: Scope) => ['memory-feedback', scope.tenant, scope.agent];
const key = (scope: Scope, id: string) => counterKey(...prefix(scope), id);

function fromCounters(values: CounterValues): FeedbackCounts {
  return { helpful: values.helpful ?? 0, unhelpful: values.unhelpful ?? 0 };
}
