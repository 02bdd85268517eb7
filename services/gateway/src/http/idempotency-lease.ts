import type { KV } from '@nats-io/kv';

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
    private readonly kv: () => Promise<KV>,
    private readonly key: string,
    private readonly write: (leaseUntil: number) => Uint8Array,
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
      const revision = await (await this.kv()).update(this.key, this.write(Date.now() + this.leaseMs), this.revision);
      if (!this.stopped) this.revision = revision;
    } catch (err) {
      // Another gateway took the key over (or the answer was written): nothing of ours to renew any more.
      if (/wrong last sequence/i.test(String((err as Error)?.message ?? err))) this.stop();
    }
  }
}
