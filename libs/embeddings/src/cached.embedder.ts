import type { Embedder } from './embedder.js';

/**
 * Keeps the most recently embedded texts (e.g. repeated search queries); same id and dimension as the inner embedder.
 */
export class CachedEmbedder implements Embedder {
  private readonly cache = new Map<string, Float32Array>();

  constructor(
    readonly inner: Embedder,
    private readonly capacity = 1000,
  ) {}

  get id(): string {
    return this.inner.id;
  }
  get dimension(): number {
    return this.inner.dimension;
  }
  get kind(): 'semantic' | 'lexical' {
    return this.inner.kind;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length > 0) {
      const vectors = await this.inner.embed(missing);
      missing.forEach((t, i) => {
        this.remember(t, vectors[i]!);
      });
    }
    return texts.map((t) => {
      const v = this.cache.get(t)!;
      this.cache.delete(t);
      this.cache.set(t, v);
      return v;
    });
  }

  private remember(text: string, vector: Float32Array): void {
    this.cache.set(text, vector);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }
}
