import { Inject, Injectable } from '@nestjs/common';
import { EMBEDDER, type Embedder } from '#embeddings';
import { VECTOR_STORE, type CollectionSpec, type StoredDoc, type VectorStore } from '#vector-store';
import { checkpointCollectionSpec } from './checkpoints/checkpoint.repository.js';
import { memoryCollectionSpec } from './memory.repository.js';
import { remediationCollectionSpec } from './remediations/remediation.repository.js';

const PAGE = 256;

/** Every collection of the memory service, all embedded by the configured embedder. */
const COLLECTIONS = [memoryCollectionSpec, checkpointCollectionSpec, remediationCollectionSpec];

/**
 * Re-embeds every memory, checkpoint and remediation from its stored text with the current embedder.
 */
@Injectable()
export class Reindexer {
  constructor(
    @Inject(VECTOR_STORE) private readonly store: VectorStore,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
  ) {}

  async reindex(): Promise<{ reindexed: number; embedder: string; duration_ms: number }> {
    const started = performance.now();
    let reindexed = 0;
    for (const specOf of COLLECTIONS)
      reindexed += await this.reindexCollection(specOf(this.embedder.id, this.embedder.dimension));
    return { reindexed, embedder: this.embedder.id, duration_ms: Math.round(performance.now() - started) };
  }

  private async reindexCollection(target: CollectionSpec): Promise<number> {
    const stored = await this.store.describe(target.name);
    if (!stored) return 0;
    const source = await this.store.open({ ...target, embedderId: stored.embedderId, dimension: stored.dimension });
    // Read everything before the collection is recreated: the store is the only copy besides the event stream.
    const docs: StoredDoc[] = [];
    for await (const page of source.scanAll(PAGE)) docs.push(...page);
    const fresh = await this.store.recreate(target);
    for (let i = 0; i < docs.length; i += PAGE) {
      const batch = docs.slice(i, i + PAGE);
      const vectors = await this.embedder.embed(batch.map((d) => d.text));
      await fresh.upsert(batch.map((d, j) => ({ ...d, vector: vectors[j]! })));
    }
    return docs.length;
  }
}
