import type { KvChange, KvWatch } from './kv-store.js';

type Listener = { readonly prefix: string; readonly onChange: (change: KvChange) => void };

/** The watches of an in-process store: every change is told to the watches whose prefix it falls under. */
export class KvChangeHub {
  private readonly listeners = new Set<Listener>();

  add(prefix: string, onChange: (change: KvChange) => void): KvWatch {
    const listener = { prefix, onChange };
    this.listeners.add(listener);
    return { stop: async () => void this.listeners.delete(listener) };
  }

  emit(change: KvChange): void {
    for (const l of this.listeners) {
      if (!change.key.startsWith(l.prefix)) continue;
      // A watcher's failure is its own: it must not fail the write that it watched.
      try {
        l.onChange(change);
      } catch {
        // ignored by design
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
