/** Grows a typed array to at least `n` elements (doubling), keeping its contents; new elements are `fill`. */
export function grown<A extends Float64Array | Int32Array | Uint8Array>(array: A, n: number, fill = 0): A {
  if (array.length >= n) return array;
  const next = new (array.constructor as new (size: number) => A)(Math.max(n, array.length * 2, 16));
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}
