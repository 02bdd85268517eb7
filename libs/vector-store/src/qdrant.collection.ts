import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { assertSortable, assertValidDoc } from './collection-spec.js';
import { cosineOf, fuseCandidates, type Candidate } from './fusion.js';
import { fromPayload, payloadKey, pointId, scopeConditions, sparseQuery, toFilter, toPoint } from './qdrant-mapping.js';
import type {
  Collection,
  CollectionSpec,
  Doc,
  DocScope,
  FieldUpdate,
  Filter,
  ListOptions,
  SearchHit,
  SearchOptions,
  StoredDoc,
} from './vector-store.js';

type Sortable = string | number | boolean | null;
const SCROLL_PAGE = 1000;

/** One Qdrant collection: named vectors `dense` (cosine) and `bm25` (sparse, idf modifier). */
export class QdrantCollection implements Collection {
  constructor(
    readonly spec: CollectionSpec,
    private readonly client: QdrantClient,
    private readonly name: string,
  ) {}

  async upsert(docs: readonly Doc[]): Promise<void> {
    if (docs.length === 0) return;
    for (const doc of docs) assertValidDoc(this.spec, doc);
    await this.client.upsert(this.name, { wait: true, points: docs.map((d) => toPoint(this.spec, d)) });
  }

  /** Qdrant writes points by id either way: an insert is a plain upsert. */
  insert(docs: readonly Doc[]): Promise<void> {
    return this.upsert(docs);
  }

  async get(scope: DocScope, ids: readonly string[]): Promise<StoredDoc[]> {
    if (ids.length === 0) return [];
    const points = await this.client.retrieve(this.name, {
      ids: ids.map((id) => pointId(scope, id)),
      with_payload: true,
      with_vector: false,
    });
    return points
      .map((p) => fromPayload(this.spec, p.payload))
      .filter((d) => d.tenant === scope.tenant && d.agent === scope.agent);
  }

  async delete(scope: DocScope, ids: readonly string[]): Promise<string[]> {
    const found = (await this.get(scope, ids)).map((d) => d.id);
    if (found.length > 0)
      await this.client.delete(this.name, { wait: true, points: found.map((id) => pointId(scope, id)) });
    return found;
  }

  /** Qdrant orders only by indexed numbers: fetch matching ids and sort keys, sort here, then read the page. */
  async list(filter: Filter, options: ListOptions): Promise<{ docs: StoredDoc[]; total: number }> {
    assertSortable(this.spec, options.sortBy);
    const key = payloadKey(options.sortBy);
    const keys: { id: string; value: Sortable }[] = [];
    for await (const points of this.scroll(toFilter(this.spec, filter), ['doc_id', key])) {
      for (const p of points)
        keys.push({ id: p.payload?.doc_id as string, value: (p.payload?.[key] as Sortable | undefined) ?? null });
    }
    const dir = options.order === 'asc' ? 1 : -1;
    keys.sort((a, b) => compareNullsLast(a.value, b.value, dir) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const pageIds = keys.slice(options.offset, options.offset + options.limit).map((k) => k.id);
    const byId = new Map((await this.get(filter, pageIds)).map((d) => [d.id, d]));
    return { docs: pageIds.flatMap((id) => byId.get(id) ?? []), total: keys.length };
  }

  async search(filter: Filter, options: SearchOptions): Promise<{ hits: SearchHit[]; total: number }> {
    const qfilter = toFilter(this.spec, filter);
    const pool = options.limit;
    const [dense, lexical] = await Promise.all([
      options.vector ? this.dense(qfilter, options.vector, pool) : [],
      this.lexical(qfilter, options, pool),
    ]);
    return fuseCandidates([...dense, ...lexical], options);
  }

  async *scanAll(pageSize: number): AsyncIterable<StoredDoc[]> {
    for await (const points of this.scroll(undefined, true, pageSize))
      yield points.map((p) => fromPayload(this.spec, p.payload));
  }

  /** One set-payload operation per document, in batches: points not found are skipped by listing only existing ones. */
  async setFields(updates: readonly FieldUpdate[]): Promise<void> {
    for (let i = 0; i < updates.length; i += SCROLL_PAGE) {
      const page = updates.slice(i, i + SCROLL_PAGE);
      const exists = new Set(
        (
          await this.client.retrieve(this.name, {
            ids: page.map((u) => pointId(u, u.id)),
            with_payload: false,
            with_vector: false,
          })
        ).map((p) => String(p.id)),
      );
      const operations = page
        .filter((u) => exists.has(pointId(u, u.id)))
        .map((u) => ({
          set_payload: {
            payload: Object.fromEntries(Object.entries(u.fields).map(([f, v]) => [payloadKey(f), v])),
            points: [pointId(u, u.id)],
          },
        }));
      if (operations.length > 0) await this.client.batchUpdate(this.name, { wait: true, operations });
    }
  }

  /** Documents in one scope: used by tests and diagnostics. */
  async count(scope: DocScope): Promise<number> {
    return (await this.client.count(this.name, { filter: { must: scopeConditions(scope) }, exact: true })).count;
  }

  private async dense(filter: Schemas['Filter'], vector: Float32Array, pool: number): Promise<Candidate[]> {
    if (!vector.some((x) => x !== 0)) return [];
    const res = await this.client.query(this.name, {
      query: Array.from(vector),
      using: 'dense',
      filter,
      limit: pool,
      with_payload: true,
    });
    return res.points.map((p) => ({ doc: fromPayload(this.spec, p.payload), cosine: p.score }));
  }

  /** Sparse candidates; with a query vector, their exact cosine too (from the returned dense vector). */
  private async lexical(filter: Schemas['Filter'], options: SearchOptions, pool: number): Promise<Candidate[]> {
    const sparse = sparseQuery(options.text);
    if (sparse.indices.length === 0) return [];
    const withVector = options.vector ? { with_vector: ['dense'] } : {};
    const res = await this.client.query(this.name, {
      query: sparse,
      using: 'bm25',
      filter,
      limit: pool,
      with_payload: true,
      ...withVector,
    });
    return res.points.map((p) => {
      const dense = (p.vector as Record<string, number[]> | undefined)?.dense;
      const cosine = options.vector && dense ? cosineOf(options.vector, dense) : undefined;
      return { doc: fromPayload(this.spec, p.payload), bm25: p.score, ...(cosine === undefined ? {} : { cosine }) };
    });
  }

  private async *scroll(filter: Schemas['Filter'] | undefined, withPayload: boolean | string[], limit = SCROLL_PAGE) {
    let offset: Schemas['ExtendedPointId'] | null | undefined;
    do {
      const page = await this.client.scroll(this.name, {
        filter,
        limit,
        offset: offset ?? undefined,
        with_payload: withPayload,
        with_vector: false,
      });
      if (page.points.length > 0) yield page.points;
      offset = page.next_page_offset as Schemas['ExtendedPointId'] | null | undefined;
    } while (offset !== null && offset !== undefined);
  }
}

function compareNullsLast(a: Sortable, b: Sortable, dir: number): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : 1) * dir;
}
