import { isKvConflict, type KvStore } from '#kv';

/**
 * Keeps a reservation its gateway holds alive while the request runs: every `everyMs` the entry is written again with
 * its lease moved `leaseMs` ahead, compare-and-set on the revision last written, so a reservation another gateway took
 * over (after the lease ran out) is never written back. A renewal that fails for a while lets the lease run out: the
 * key may then be taken over while this request still runs, which is safe (services derive ids from the key).
 */
export class ReservationLease {
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly kv: KvStore,
    private readonly key: string,
    private readonly write: (leaseUntil: number) => string,
    private revision: number,
    private readonly leaseMs: number,
    everyMs: number,
  ) {
    this.timer = setInterval(() => void this.renew(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async renew(): Promise<void> {
    try {
      const revision = await this.kv.put(this.key, this.write(Date.now() + this.leaseMs), { expected: this.revision });
      if (!this.stopped) this.revision = revision;
    } catch (err) {
      // Another gateway took the key over (or the answer was written): nothing of ours to renew any more.
      if (isKvConflict(err)) this.stop();
    }
  }
}
