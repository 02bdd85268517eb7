import { useEffect, useState } from 'react';

/** Waits between attempts to reach the server again, in seconds; the last repeats. */
export const BACKOFF_S = [1, 2, 4, 8, 15, 30] as const;

export interface ConnectionState {
  readonly reachable: boolean;
  /** When the next attempt is due (ms since the epoch), while unreachable. */
  readonly retryAt?: number;
  /** When the server last failed to answer. */
  readonly since?: number;
}

type Listener = (state: ConnectionState) => void;

/**
 * Whether the Alfred server answers. A request that got no answer marks it unreachable; from then on /health is
 * tried with backoff until something answers, and then every screen that failed that way loads again. Screens
 * keep what they showed meanwhile.
 */
class ConnectionMonitor {
  private state: ConnectionState = { reachable: true };
  private readonly listeners = new Set<Listener>();
  private attempt = 0;
  private timer?: ReturnType<typeof setTimeout>;

  get current(): ConnectionState {
    return this.state;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  lost(): void {
    if (!this.state.reachable) return;
    this.attempt = 0;
    this.schedule(Date.now());
  }

  answered(): void {
    if (this.state.reachable) return;
    clearTimeout(this.timer);
    this.attempt = 0;
    this.set({ reachable: true });
  }

  /** Tries now instead of waiting for the next attempt. */
  retryNow(): void {
    if (this.state.reachable) return;
    clearTimeout(this.timer);
    void this.probe();
  }

  private schedule(since: number): void {
    const wait = BACKOFF_S[Math.min(this.attempt, BACKOFF_S.length - 1)]! * 1000;
    this.attempt++;
    this.set({ reachable: false, since, retryAt: Date.now() + wait });
    this.timer = setTimeout(() => void this.probe(), wait);
  }

  private async probe(): Promise<void> {
    try {
      // /health answers without a key; any answer, even a 503 of a degraded service, means the server is there.
      await fetch('/health', { cache: 'no-store' });
      this.answered();
    } catch {
      this.schedule(this.state.since ?? Date.now());
    }
  }

  private set(state: ConnectionState): void {
    this.state = state;
    for (const l of this.listeners) l(state);
  }
}

export const connection = new ConnectionMonitor();

export function useConnection(): ConnectionState {
  const [state, setState] = useState(connection.current);
  useEffect(() => connection.subscribe(setState), []);
  return state;
}

/** Calls `fn` each time the server answers again after being unreachable. */
export function useOnReconnect(fn: () => void): void {
  useEffect(() => connection.subscribe((s) => s.reachable && fn()), [fn]);
}
