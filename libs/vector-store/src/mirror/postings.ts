/** A growable list of (slot, weight) pairs in typed arrays: one term's postings. Order is not kept. */
export class Postings {
  slots = new Int32Array(4);
  weights = new Float32Array(4);
  size = 0;

  add(slot: number, weight: number): void {
    if (this.size === this.slots.length) {
      const slots = new Int32Array(this.size * 2);
      slots.set(this.slots);
      this.slots = slots;
      const weights = new Float32Array(this.size * 2);
      weights.set(this.weights);
      this.weights = weights;
    }
    this.slots[this.size] = slot;
    this.weights[this.size] = weight;
    this.size++;
  }

  /** Removes a slot by swapping the last entry into its place. */
  remove(slot: number): void {
    const at = this.slots.subarray(0, this.size).indexOf(slot);
    if (at < 0) return;
    this.size--;
    this.slots[at] = this.slots[this.size]!;
    this.weights[at] = this.weights[this.size]!;
  }
}

/** Grows a typed array to at least `n` elements (doubling), keeping its contents; new elements are `fill`. */
export function grown<A extends Float64Array | Int32Array | Uint8Array>(array: A, n: number, fill = 0): A {
  if (array.length >= n) return array;
  const next = new (array.constructor as new (size: number) => A)(Math.max(n, array.length * 2, 16));
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}
