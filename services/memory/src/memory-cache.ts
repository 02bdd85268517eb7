import type { Scope } from '#contracts';
import type { MemoryRecord } from './memory.repository.js';

export interface MemoryCacheOptions {
  /** Records kept at most (least recently read dropped first); 0 turns the cache off. */
  readonly capacity?: number;
  /** Age after which an entry is read again from the store: bounds staleness if a change event was missed. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

interface Entry<V> {
  readonly record: V;
  readonly at: number;
}

/**
 * A bounded LRU of values by (tenant, agent, id), read through by the memory service (records) and the
 * feedback service (counts). Writes of
 * this instance evict their entries once acknowledged; changes made by other instances evict them through
 * the memory event subscription. A read that overlapped any eviction does not fill the cache, so a slow
 * read can never put back a record older than a write that finished meanwhile.
 */
export class ScopedCache<V extends { readonly id: string }> {
  private readonly entries = new Map<string, Entry<V>>();
  private evictions = 0;
  private readonly capacity: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: MemoryCacheOptions = {}) {
    this.capacity = options.capacity ?? 10_000;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  get(scope: Scope, id: string): V | undefined {
    const key = keyOf(scope.tenant, scope.agent, id);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (this.now() - entry.at > this.maxAgeMs) return undefined;
    this.entries.set(key, entry);
    return entry.record;
  }

  /** Taken before reading the store; pass it to `fill` with what the read returned. */
  ticket(): number {
    return this.evictions;
  }

  /** Caches what a read returned, unless an eviction happened since the read's ticket. */
  fill(scope: Scope, record: V, ticket: number): void {
    if (ticket === this.evictions) this.put(keyOf(scope.tenant, scope.agent, record.id), record);
  }

  /** A record this instance has just created and recorded: its id is new, so no other writer can have changed it. */
  remember(scope: Scope, record: V): void {
    this.put(keyOf(scope.tenant, scope.agent, record.id), record);
  }

  evict(tenant: string, agent: string, id: string): void {
    this.evictions++;
    this.entries.delete(keyOf(tenant, agent, id));
  }

  get size(): number {
    return this.entries.size;
  }

  private put(key: string, record: V): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { record, at: this.now() });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** The memory records cache. */
export class MemoryCache extends ScopedCache<MemoryRecord> {}

const keyOf = (tenant: string, agent: string, id: string) => `${tenant}\u0000${agent}\u0000${id}`;
