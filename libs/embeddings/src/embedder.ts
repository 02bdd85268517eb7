/** Turns texts into dense vectors. */
export interface Embedder {
  /** Stable id stored with the data, e.g. `hash-v2-384`, `onnx:all-minilm-l6-v2`, `openai:text-embedding-3-small`. */
  readonly id: string;
  readonly dimension: number;
  /** `lexical` means no semantic model: similarity is word overlap only. */
  readonly kind: 'semantic' | 'lexical';
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export const EMBEDDER = Symbol('EMBEDDER');
