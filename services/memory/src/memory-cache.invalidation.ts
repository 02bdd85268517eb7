import { MemoryEvents } from '#contracts';
import type { Bus, EventSubscription } from '#bus';

type ChangeKind = keyof typeof MemoryEvents;

/**
 * Evicts cached values changed by any instance sharing the store: a fan-out subscription to the given
 * memory events (records: updated and deleted — created ids are new, so nothing is cached for them yet;
 * feedback counts: feedback).
 */
export async function subscribeCacheInvalidation(
  bus: Bus,
  cache: { evict(tenant: string, agent: string, id: string): void },
  kinds: readonly ChangeKind[] = ['updated', 'deleted'],
): Promise<EventSubscription> {
  const evict = (change: { tenant: string; agent: string; id: string }) =>
    cache.evict(change.tenant, change.agent, change.id);
  const subscriptions = await Promise.all(kinds.map((kind) => bus.subscribe(MemoryEvents[kind], evict)));
  return { close: async () => void (await Promise.all(subscriptions.map((s) => s.close()))) };
}
