/** A bounded min-heap keeping the `capacity` best (slot, score) pairs; ties favour the lower slot. */
export class TopHeap {
  private readonly items: Array<{ slot: number; score: number }> = [];
  constructor(private readonly capacity: number) {}

  push(slot: number, score: number): void {
    if (this.items.length < this.capacity) {
      this.items.push({ slot, score });
      this.up(this.items.length - 1);
    } else if (
      this.capacity > 0 &&
      (score > this.items[0]!.score || (score === this.items[0]!.score && slot < this.items[0]!.slot))
    ) {
      this.items[0] = { slot, score };
      this.down(0);
    }
  }

  get full(): boolean {
    return this.items.length >= this.capacity;
  }

  /** The lowest score kept (the threshold to beat once full). */
  get min(): number {
    return this.items[0]?.score ?? 0;
  }

  sorted(): Array<{ slot: number; score: number }> {
    return [...this.items].sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
  }

  private up(i: number): void {
    const h = this.items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && worse(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

const worse = (a: { slot: number; score: number }, b: { slot: number; score: number }) =>
  a.score < b.score || (a.score === b.score && a.slot > b.slot);
