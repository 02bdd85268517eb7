import { createHash } from 'node:crypto';

/**
 * A unit vector derived from a key, for rows that are only ever read by id (the vector store needs a vector
 * per document). Spread over all dimensions so vector-index training never sees degenerate duplicates.
 */
export function placeholderVector(key: string, dimension: number): Float32Array {
  const v = new Float32Array(dimension);
  let block = createHash('sha256').update(key).digest();
  let norm = 0;
  for (let i = 0; i < dimension; i++) {
    if (i > 0 && i % block.length === 0) block = createHash('sha256').update(block).digest();
    const x = block[i % block.length]! / 255 - 0.5;
    v[i] = x;
    norm += x * x;
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < dimension; i++) v[i]! *= scale;
  if (norm === 0) v[0] = 1;
  return v;
}
