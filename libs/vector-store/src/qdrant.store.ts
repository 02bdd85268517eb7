import { Metrics } from '#metrics';
import { QdrantClient } from '@qdrant/js-client-rest';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { addedFields, assertValidSpec, embedderMismatch } from './collection-spec.js';
import { QdrantCollection } from './qdrant.collection.js';
import { indexSchema, payloadKey } from './qdrant-mapping.js';
import type { CollectionSpec, FieldType, VectorStore } from './vector-store.js';

export interface QdrantStoreOptions {
  readonly url: string;
  readonly apiKey?: string;
  /** Prefix of every collection name (lets tests and several deployments share a server). */
  readonly prefix?: string;
  readonly timeoutMs?: number;
}

interface AlfredMeta {
  embedderId: string;
  dimension: number;
  fields: Record<string, FieldType>;
}

/**
 * The distributed vector store. One Qdrant collection per spec; the embedder id, dimension and field
 * types are kept in the collection's own `metadata` (Qdrant ≥ 1.16), so they live and die with it.
 */
export class QdrantStore implements VectorStore {
  readonly kind = 'qdrant' as const;
  private readonly client: QdrantClient;
  private readonly prefix: string;
  /** Stop sampling each open collection's size for /metrics. */
  private readonly sizes = new Map<string, () => void>();

  constructor(options: QdrantStoreOptions) {
    this.client = new QdrantClient({
      url: options.url,
      apiKey: options.apiKey,
      timeout: options.timeoutMs ?? 10_000,
      checkCompatibility: false,
    });
    this.prefix = options.prefix ?? 'alfred_';
  }

  async open(spec: CollectionSpec): Promise<QdrantCollection> {
    assertValidSpec(spec);
    const name = this.prefix + spec.name;
    const stored = await this.readMeta(name);
    if (stored === undefined) await this.create(name, spec);
    else if (stored.embedderId !== spec.embedderId || stored.dimension !== spec.dimension)
      throw embedderMismatch(spec, stored);
    else await this.addFields(name, spec, addedFields(spec, stored.fields));
    this.sizes.set(
      spec.name,
      Metrics.storeSize.track(
        { store: 'qdrant', collection: spec.name },
        async () => (await this.client.count(name, { exact: true })).count,
      ),
    );
    return new QdrantCollection(spec, this.client, name);
  }

  /** Fields a spec adds: indexed, and recorded in the collection's metadata (payloads need no migration). */
  private async addFields(
    name: string,
    spec: CollectionSpec,
    added: ReadonlyArray<[string, FieldType]>,
  ): Promise<void> {
    if (added.length === 0) return;
    for (const [field, type] of added)
      await this.client.createPayloadIndex(name, {
        wait: true,
        field_name: payloadKey(field),
        field_schema: indexSchema(type),
      });
    const alfred: AlfredMeta = { embedderId: spec.embedderId, dimension: spec.dimension, fields: { ...spec.fields } };
    await this.client.updateCollection(name, { metadata: { alfred } } as Parameters<
      QdrantClient['updateCollection']
    >[1]);
  }

  async drop(name: string): Promise<void> {
    this.sizes.get(name)?.();
    this.sizes.delete(name);
    if ((await this.client.collectionExists(this.prefix + name)).exists)
      await this.client.deleteCollection(this.prefix + name);
  }

  async describe(name: string): Promise<{ embedderId: string; dimension: number } | undefined> {
    const meta = await this.readMeta(this.prefix + name);
    return meta === undefined ? undefined : { embedderId: meta.embedderId, dimension: meta.dimension };
  }

  async recreate(spec: CollectionSpec): Promise<QdrantCollection> {
    assertValidSpec(spec);
    const name = this.prefix + spec.name;
    if ((await this.client.collectionExists(name)).exists) await this.client.deleteCollection(name);
    return this.open(spec);
  }

  /** The REST client holds no connections that need closing; only the size sampling stops. */
  close(): Promise<void> {
    for (const untrack of this.sizes.values()) untrack();
    this.sizes.clear();
    return Promise.resolve();
  }

  private async readMeta(name: string): Promise<AlfredMeta | undefined> {
    if (!(await this.client.collectionExists(name)).exists) return undefined;
    const info = await this.client.getCollection(name);
    const meta = (info.config as { metadata?: Record<string, unknown> | null }).metadata?.alfred as
      | AlfredMeta
      | undefined;
    if (meta === undefined)
      throw new AlfredError(
        ErrorCode.Internal,
        `Qdrant collection ${name} has no Alfred metadata; it was not made by Alfred`,
      );
    return meta;
  }

  private async create(name: string, spec: CollectionSpec): Promise<void> {
    const alfred: AlfredMeta = { embedderId: spec.embedderId, dimension: spec.dimension, fields: { ...spec.fields } };
    await this.client.createCollection(name, {
      vectors: { dense: { size: spec.dimension, distance: 'Cosine' } },
      sparse_vectors: { bm25: { modifier: 'idf' } },
      metadata: { alfred },
    });
    const index = (
      field_name: string,
      field_schema: Parameters<QdrantClient['createPayloadIndex']>[1]['field_schema'],
    ) => this.client.createPayloadIndex(name, { wait: true, field_name, field_schema });
    await index('tenant', { type: 'keyword', is_tenant: true });
    await index('agent', 'keyword');
    await index('doc_id', 'keyword');
    for (const [field, type] of Object.entries(spec.fields)) await index(payloadKey(field), indexSchema(type));
  }
}
