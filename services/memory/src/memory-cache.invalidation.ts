import { MemoryEvents } from '#contracts';
import type { Bus, EventSubscription } from '#bus';
import type { MemoryCache } from './memory-cache.js';

/**
 * Evicts cached records changed by any instance sharing the store: a fan-out subscription to the
 * updated and deleted events (created ids are new, so nothing can be cached for them yet).
 */
export async function subscribeCacheInvalidation(bus: Bus, cache: MemoryCache): Promise<EventSubscription> {
  const evict = (change: { tenant: string; agent: string; id: string }) => cache.evict(change.tenant, change.agent, change.id);
  const subscriptions = await Promise.all([bus.subscribe(MemoryEvents.updated, evict), bus.subscribe(MemoryEvents.deleted, evict)]);
  return { close: async () => void (await Promise.all(subscriptions.map((s) => s.close()))) };
}
