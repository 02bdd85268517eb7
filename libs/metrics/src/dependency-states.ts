/** Where a client of a dependency stands: serving, away and trying to come back, or closed by its owner. */
export type DependencyState = 'connected' | 'reconnecting' | 'closed';

/** One client of a dependency, as its adapter reports it. */
export interface TrackedClient {
  readonly dependency: string;
  /** Names the client in logs and readiness. */
  readonly purpose: string;
  state: DependencyState;
}

const clients = new Set<TrackedClient>();

/**
 * Registers a client that the adapter of a dependency opened (in state `reconnecting` until it connects): the adapter
 * updates `state` as its connection comes and goes and calls `untrack` once its owner closed it. Readiness reads these
 * without knowing the adapters.
 */
export function trackClient(dependency: string, purpose: string): TrackedClient & { untrack(): void } {
  const client: TrackedClient = { dependency, purpose, state: 'reconnecting' };
  clients.add(client);
  return Object.assign(client, { untrack: () => void clients.delete(client) });
}

/** The state of every client of `dependency` this process opened and has not closed; empty when it uses none. */
export function clientStates(dependency: string): Array<{ purpose: string; state: DependencyState }> {
  return [...clients].filter((c) => c.dependency === dependency).map((c) => ({ purpose: c.purpose, state: c.state }));
}
