/**
 * One value kept for `ttlMs` and shared by concurrent callers (one load in flight at a time); failures are not kept.
 */
export class TtlCache<T> {
  private value: { at: number; promise: Promise<T> } | undefined;

  constructor(private readonly ttlMs: number) {}

  get(load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    if (this.value && now - this.value.at < this.ttlMs) return this.value.promise;
    const promise = load();
    const entry = { at: now, promise };
    this.value = entry;
    promise.catch(() => {
      if (this.value === entry) this.value = undefined;
    });
    return promise;
  }

  /** Replaces the kept value (a fresher one was just loaded). */
  set(value: T): void {
    this.value = { at: Date.now(), promise: Promise.resolve(value) };
  }
}
