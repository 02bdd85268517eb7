import {
  MemoryCreateBody,
  MemoryEvents,
  type ConversationIngestBody,
  type MemoryChange,
  type MemoryCreated,
  type MemoryListQuery,
  type MemorySource,
  type MemoryUpdateBody,
  type Scope,
} from '#contracts';
import { AlfredError } from '#errors';
import { assertBeforeDeadline, currentRequest, type ChangeEvent, type ChangeWriter } from '#bus';
import type { Embedder } from '#embeddings';
import { createHash, randomUUID } from 'node:crypto';
import { conversationContexts, messageContent } from './conversation-context.js';
import { MemoryCache } from './memory-cache.js';
import type { MemoryHistory } from './memory-events.js';
import { toMemory, type MemoryRecord, type MemoryRepository } from './memory.repository.js';

/**
 * Memory logic: every write goes through the durable-change path (`#bus` DurableChanges): acknowledged once the
 * store and the outbox hold it, its change event published on the durable stream at once or, while the broker is
 * away, by the outbox's relay. Nothing is undone behind a client's back.
 */
export class MemoryService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly embedder: Embedder,
    private readonly changes: ChangeWriter,
    private readonly events: MemoryHistory,
    private readonly now: () => Date = () => new Date(),
    private readonly cache: MemoryCache = new MemoryCache(),
  ) {}

  async create(scope: Scope, body: MemoryCreateBody, source: MemorySource): Promise<MemoryCreated> {
    const [created] = await this.createMany(scope, [body], source);
    return created!;
  }

  async batchCreate(scope: Scope, items: readonly unknown[], source: MemorySource) {
    const valid: MemoryCreateBody[] = [];
    const errors: Array<{ index: number; error: string }> = [];
    items.forEach((item, index) => {
      const parsed = MemoryCreateBody.safeParse(item);
      if (parsed.success) valid.push(parsed.data);
      else errors.push({ index, error: parsed.error.issues.map(describeIssue).join('; ') });
    });
    const memories = valid.length ? await this.createMany(scope, valid, source) : [];
    return { created: memories.length, memories, errors };
  }

  /** Stores each message as a memory "speaker: content" with its conversation context (see conversation-context.ts). */
  async ingestConversation(scope: Scope, body: ConversationIngestBody) {
    const conversationId = body.conversation_id ?? randomUUID();
    const bodies = body.messages.map((m) => ({ content: messageContent(m), importance: body.importance, tags: body.tags }));
    const memories = await this.createMany(scope, bodies, 'daily', conversationContexts(body.messages));
    return { conversation_id: conversationId, created: memories.length, memories };
  }

  /** The one read served from the cache; writes read their `before` from the store, so versions never go stale. */
  async get(scope: Scope, id: string) {
    const record = await this.read(scope, id);
    if (!record) throw AlfredError.notFound('Memory', id);
    return toMemory(record);
  }

  async update(scope: Scope, id: string, patch: MemoryUpdateBody) {
    const before = await this.mustGet(scope, id);
    const after: MemoryRecord = {
      ...before,
      content: patch.content ?? before.content,
      importance: patch.importance ?? before.importance,
      tags: patch.tags ?? before.tags,
      updated_at: this.now().toISOString(),
      version: before.version + 1,
    };
    const [vector] = await this.embedder.embed([after.content]);
    assertBeforeDeadline(`memory ${id} was updated`);
    await this.changes.apply([change('updated', scope, after)], () => this.repo.save(scope, [after], [vector!])).finally(() =>
      this.cache.evict(scope.tenant, scope.agent, id),
    );
    return { id, timestamp: after.timestamp, updated_at: after.updated_at!, content: after.content, importance: after.importance, tags: after.tags };
  }

  async delete(scope: Scope, id: string) {
    const before = await this.mustGet(scope, id);
    await this.deleteRecords(scope, [before]);
    return { id, deleted: true as const, timestamp: this.now().toISOString() };
  }

  async batchDelete(scope: Scope, ids: readonly string[]) {
    const unique = [...new Set(ids)];
    const found = (await Promise.all(unique.map((id) => this.repo.get(scope, id)))).filter(
      (r): r is MemoryRecord => r !== undefined,
    );
    await this.deleteRecords(scope, found);
    const foundIds = new Set(found.map((r) => r.id));
    return {
      deleted: found.length,
      not_found: unique.filter((id) => !foundIds.has(id)),
      timestamp: this.now().toISOString(),
    };
  }

  async list(scope: Scope, query: MemoryListQuery) {
    const { records, total } = await this.repo.list(scope, query);
    return {
      memories: records.map(toMemory),
      pagination: { total, limit: query.limit, offset: query.offset, has_more: query.offset + records.length < total },
    };
  }

  async history(scope: Scope, id: string) {
    const changes = (await this.events.history(id)).filter((c) => c.tenant === scope.tenant && c.agent === scope.agent);
    if (changes.length === 0) throw AlfredError.notFound('Memory', id);
    return { id, events: changes.map(({ tenant: _t, agent: _a, ...rest }) => rest) };
  }

  private async createMany(scope: Scope, bodies: readonly MemoryCreateBody[], source: MemorySource, contexts?: readonly string[]) {
    const at = this.now().toISOString();
    const key = currentRequest()?.idempotencyKey;
    const records: MemoryRecord[] = bodies.map((b, i) => ({
      id: key ? keyedId(scope, key, i) : randomUUID(),
      content: b.content,
      date: at.slice(0, 10),
      timestamp: at,
      importance: b.importance,
      tags: dedupe(b.tags),
      source,
      version: 1,
      ...(contexts?.[i] ? { context: contexts[i] } : {}),
    }));
    const vectors = await this.embedder.embed(records.map((r) => r.content));
    // Embedding may retry for long; a caller already told 504 must not find the memories stored after all.
    assertBeforeDeadline('the memories were stored');
    // Ids from an Idempotency-Key may exist already (a retry after a crash between store and answer): upsert them.
    await this.changes.apply(
      records.map((r) => change('created', scope, r)),
      () => (key ? this.repo.save(scope, records, vectors) : this.repo.insert(scope, records, vectors)),
    );
    for (const r of records) this.cache.remember(scope, r);
    return records.map((r) => ({ id: r.id, timestamp: r.timestamp, content: r.content, importance: r.importance, tags: r.tags }));
  }

  private async deleteRecords(scope: Scope, records: readonly MemoryRecord[]) {
    if (records.length === 0) return;
    assertBeforeDeadline('the memories were deleted');
    const at = this.now().toISOString();
    const deleted = records.map((r) => change('deleted', scope, { ...r, version: r.version + 1, updated_at: at }));
    await this.changes
      .apply(deleted, () => this.repo.delete(scope, records.map((r) => r.id)))
      .finally(() => records.forEach((r) => this.cache.evict(scope.tenant, scope.agent, r.id)));
  }

  private async mustGet(scope: Scope, id: string): Promise<MemoryRecord> {
    const record = await this.repo.get(scope, id);
    if (!record) throw AlfredError.notFound('Memory', id);
    return record;
  }

  /** Read through the cache; what the store returns is cached unless a change landed meanwhile. */
  private async read(scope: Scope, id: string): Promise<MemoryRecord | undefined> {
    const cached = this.cache.get(scope, id);
    if (cached) return cached;
    const ticket = this.cache.ticket();
    const record = await this.repo.get(scope, id);
    if (record) this.cache.fill(scope, record, ticket);
    return record;
  }
}

/**
 * The change event of a write. Its message id is unique to the change (the outbox's transaction), except a creation's:
 * one creation whatever its retries (its id is new, or derived from the client's Idempotency-Key), so a retried
 * creation's event is deduplicated.
 */
function change(kind: 'created' | 'updated' | 'deleted', scope: Scope, r: MemoryRecord): ChangeEvent<(typeof MemoryEvents)[typeof kind]> {
  const payload: MemoryChange = {
    kind,
    id: r.id,
    tenant: scope.tenant,
    agent: scope.agent,
    version: r.version,
    at: r.updated_at ?? r.timestamp,
    ...(kind === 'deleted' ? {} : { memory: toMemory(r) }),
  };
  return { event: MemoryEvents[kind], payload, key: r.id, ...(kind === 'created' ? { msgId: `${r.id}:1:created` } : {}) };
}

/** A memory id (UUID-shaped) that the same Idempotency-Key, scope and position always give. */
function keyedId(scope: Scope, key: string, index: number): string {
  const h = createHash('sha256').update(`${scope.tenant}\n${scope.agent}\n${key}\n${index}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function dedupe(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

function describeIssue(issue: { path: PropertyKey[]; message: string }): string {
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}
