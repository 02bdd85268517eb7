import { basename, dirname, resolve } from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import type { Embedder } from './embedder.js';

export interface OnnxEmbedderOptions {
  /** A local model folder: config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx. */
  readonly modelDir: string;
  /** Texts per forward pass. */
  readonly batchSize?: number;
}

type Extractor = (
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ data: Float32Array; dims: number[] }>;

/**
 * A local sentence-embedding model run by transformers.js (onnxruntime-node), fully offline:
 * remote model loading is switched off, so a missing file is an error, never a download.
 */
export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly kind = 'semantic' as const;
  private dim: number | undefined;
  private extractor: Extractor | undefined;

  constructor(private readonly options: OnnxEmbedderOptions) {
    this.id = `onnx:${basename(resolve(options.modelDir))}`;
  }

  get dimension(): number {
    if (this.dim === undefined)
      throw new AlfredError(ErrorCode.Internal, `${this.id}: dimension unknown until init() has run`);
    return this.dim;
  }

  /** Loads the model and learns its dimension by embedding a probe. */
  async init(): Promise<this> {
    if (this.extractor !== undefined) return this;
    const folder = resolve(this.options.modelDir);
    try {
      const { env, pipeline } = await import('@huggingface/transformers');
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      env.localModelPath = `${dirname(folder)}/`;
      const extractor = await pipeline('feature-extraction', basename(folder), {
        dtype: 'fp32',
        local_files_only: true,
      });
      this.extractor = extractor as unknown as Extractor;
      this.dim = (await this.run(['probe']))[0]!.length;
    } catch (err) {
      if (err instanceof AlfredError) throw err;
      throw new AlfredError(
        ErrorCode.ModelNotConfigured,
        `cannot load the embedding model in ${folder}: ${(err as Error).message}`,
        { modelDir: folder },
        { cause: err },
      );
    }
    return this;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.extractor === undefined) await this.init();
    const size = this.options.batchSize ?? 32;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.run(texts.slice(i, i + size))));
    return out;
  }

  private async run(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const tensor = await this.extractor!(texts, { pooling: 'mean', normalize: true });
    const width = tensor.dims.at(-1)!;
    return texts.map((_, i) => Float32Array.from(tensor.data.subarray(i * width, (i + 1) * width)));
  }
}
