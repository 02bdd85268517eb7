interface Waiter {
  readonly grant: () => void;
}

/** A slot held for one piece of work; give it back exactly once. */
export type SlotRelease = () => void;

/**
 * At most `size` pieces of work at once, at most `perKey` of them for one key (a tenant), and waiting work served
 * round-robin across keys (each key's own in arrival order). So a key that floods the slots takes no more than its
 * share while others wait, and another key's work is next in line whenever a slot frees, however long the flood's
 * queue. A waiter leaves the line when its signal aborts.
 */
export class FairSlots {
  private readonly running = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();
  /** Keys with waiting work, in the order they are next served. */
  private readonly ring: string[] = [];
  private held = 0;

  constructor(
    readonly size: number,
    readonly perKey: number = size,
  ) {
    if (!(size >= 1 && perKey >= 1)) throw new RangeError('slots need a size and a per-key share of at least 1');
  }

  /** Work running now, and waiting. */
  get counts(): { running: number; waiting: number } {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { running: this.held, waiting };
  }

  async acquire(key: string, signal?: AbortSignal): Promise<SlotRelease> {
    signal?.throwIfAborted();
    if (!this.queues.has(key) && this.eligible(key)) return this.take(key);
    return new Promise<SlotRelease>((resolve, reject) => {
      const onAbort = () => {
        this.leave(key, waiter);
        reject(
          signal!.reason instanceof Error
            ? signal!.reason
            : new Error(`stopped while waiting for a slot: ${String(signal!.reason)}`),
        );
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take(key));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.queues.get(key);
      if (queue) queue.push(waiter);
      else {
        this.queues.set(key, [waiter]);
        this.ring.push(key);
      }
    });
  }

  async run<T>(key: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(key, signal);
    try {
      return await work();
    } finally {
      release();
    }
  }

  private eligible(key: string): boolean {
    return this.held < this.size && (this.running.get(key) ?? 0) < this.perKey;
  }

  private take(key: string): SlotRelease {
    this.held++;
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      const left = this.running.get(key)! - 1;
      if (left === 0) this.running.delete(key);
      else this.running.set(key, left);
      this.dispatch();
    };
  }

  /** Grants free slots to the first keys in the ring that are under their share, each then moving to the back. */
  private dispatch(): void {
    for (let i = 0; i < this.ring.length && this.held < this.size; ) {
      const key = this.ring[i]!;
      if (!this.eligible(key)) {
        i++;
        continue;
      }
      const queue = this.queues.get(key)!;
      const waiter = queue.shift()!;
      this.ring.splice(i, 1);
      if (queue.length > 0) this.ring.push(key);
      else this.queues.delete(key);
      waiter.grant();
    }
  }

  private leave(key: string, waiter: Waiter): void {
    const queue = this.queues.get(key);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    if (queue.length > 0) return;
    this.queues.delete(key);
    this.ring.splice(this.ring.indexOf(key), 1);
  }
}
