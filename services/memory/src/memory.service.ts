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
  type Writer,
} from '#contracts';
import { AlfredError } from '#errors';
import type { ChangeEvent, ChangeWriter } from '#durable';
import { assertBeforeDeadline, currentRequest } from '#bus';
import type { Embedder } from '#embeddings';
import { createHash, randomUUID } from 'node:crypto';
import { conversationContexts, messageContent } from './conversation-context.js';
import { MemoryCache } from './memory-cache.js';
import type { MemoryHistory } from './memory-events.js';
import { toMemory, type MemoryRecord, type MemoryRepository } from './memory.repository.js';
import { trustOf, writtenBy } from './provenance/provenance-fields.js';
import { MemoryWriteGuard } from './safety/memory-write.guard.js';

/** Memories a tag-prefix list looks at (in the list's order), and the pages it reads them in. */
const TAG_PREFIX_CAP = 5_000;
const LIST_PAGE = 100;

export interface MemoryServiceOptions {
  /** The secret check every text passes before it is stored (refused or redacted per tenant). */
  readonly guard?: MemoryWriteGuard;
  readonly now?: () => Date;
  readonly cache?: MemoryCache;
}

/**
 * Memory logic, with one write path: every write is checked once (secrets refused or redacted, the injection mark
 * computed), becomes one record with its provenance and mark, and is made with its change events as one durable
 * change (`#bus` DurableChanges: with the embedded store, one outbox line, fsynced together with the writes that
 * arrive beside it). Acknowledged once durable; its events published on the durable stream at once or, while the
 * broker is away, by the outbox's relay. Nothing is undone behind a client's back.
 */
export class MemoryService {
  private readonly guard: MemoryWriteGuard;
  private readonly now: () => Date;
  private readonly cache: MemoryCache;

  constructor(
    private readonly repo: MemoryRepository,
    private readonly embedder: Embedder,
    private readonly changes: ChangeWriter,
    private readonly events: MemoryHistory,
    options: MemoryServiceOptions = {},
  ) {
    this.guard = options.guard ?? new MemoryWriteGuard();
    this.now = options.now ?? (() => new Date());
    this.cache = options.cache ?? new MemoryCache();
  }

  async create(scope: Scope, body: MemoryCreateBody, source: MemorySource, writer?: Writer): Promise<MemoryCreated> {
    const admitted = await this.guard.create(scope, body);
    const [created] = await this.createMany(scope, [admitted], source, writer, [admitted.content]);
    return created!;
  }

  /** Valid items are stored (an item with a secret is refused like an invalid one); the others reported by index. */
  async batchCreate(scope: Scope, items: readonly unknown[], source: MemorySource, writer?: Writer) {
    const valid: Array<{ index: number; body: MemoryCreateBody }> = [];
    const errors: Array<{ index: number; error: string }> = [];
    items.forEach((item, index) => {
      const parsed = MemoryCreateBody.safeParse(item);
      if (parsed.success) valid.push({ index, body: parsed.data });
      else errors.push({ index, error: parsed.error.issues.map(describeIssue).join('; ') });
    });
    const checked = await this.guard.batch(scope, valid);
    errors.push(...checked.refused);
    const bodies = checked.passed.map((p) => p.body);
    const memories = bodies.length
      ? await this.createMany(
          scope,
          bodies,
          source,
          writer,
          bodies.map((b) => b.content),
        )
      : [];
    return { created: memories.length, memories, errors: errors.sort((a, b) => a.index - b.index) };
  }

  /**
   * Stores each message as a memory "speaker: content" with its conversation context (see conversation-context.ts).
   * Each message is checked as the speaker said it (the stored "speaker: content" would look like a role line).
   */
  async ingestConversation(scope: Scope, conversation: ConversationIngestBody, writer?: Writer) {
    const body = await this.guard.conversation(scope, conversation);
    const conversationId = body.conversation_id ?? randomUUID();
    const bodies = body.messages.map((m) => ({
      content: messageContent(m),
      importance: body.importance,
      tags: body.tags,
    }));
    const checked = body.messages.map((m) => m.content);
    const memories = await this.createMany(
      scope,
      bodies,
      'daily',
      writer,
      checked,
      conversationContexts(body.messages),
    );
    return { conversation_id: conversationId, created: memories.length, memories };
  }

  /** The one read served from the cache; writes read their `before` from the store, so versions never go stale. */
  async get(scope: Scope, id: string) {
    const record = await this.read(scope, id);
    if (!record) throw AlfredError.notFound('Memory', id);
    return toMemory(scope, record);
  }

  /** Only the given fields change; a new content is checked again, and who first wrote the memory stays. */
  async update(scope: Scope, id: string, patch: MemoryUpdateBody) {
    const admitted = await this.guard.update(scope, patch);
    const before = await this.mustGet(scope, id);
    const at = this.now().toISOString();
    const content = admitted.content ?? before.content;
    const rechecked =
      admitted.content === undefined
        ? before.written
        : { ...(before.written ?? writtenBy(undefined, at, '')), trust: trustOf(content) };
    const after: MemoryRecord = {
      ...before,
      content,
      importance: admitted.importance ?? before.importance,
      tags: admitted.tags ?? before.tags,
      updated_at: at,
      version: before.version + 1,
      ...(rechecked ? { written: rechecked } : {}),
    };
    const [vector] = await this.embedder.embed([after.content]);
    assertBeforeDeadline(`memory ${id} was updated`);
    await this.changes
      .commit([change('updated', scope, after)], [this.repo.saveWrite(scope, [after], [vector!], 'upsert')])
      .finally(() => this.cache.evict(scope.tenant, scope.agent, id));
    return {
      id,
      timestamp: after.timestamp,
      updated_at: at,
      content: after.content,
      importance: after.importance,
      tags: after.tags,
    };
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

  /**
   * A page of the scope's memories; provenance and trust filters are conditions of the same query. A tag prefix is
   * matched here (the stores match whole tags), over the scope's first TAG_PREFIX_CAP memories in the list's order.
   */
  async list(scope: Scope, query: MemoryListQuery) {
    const { records, total } =
      query.tag_prefix === undefined
        ? await this.repo.list(scope, query)
        : await this.byTagPrefix(scope, query, query.tag_prefix);
    return {
      memories: records.map((r) => toMemory(scope, r)),
      pagination: { total, limit: query.limit, offset: query.offset, has_more: query.offset + records.length < total },
    };
  }

  private async byTagPrefix(
    scope: Scope,
    query: MemoryListQuery,
    prefix: string,
  ): Promise<{ records: MemoryRecord[]; total: number }> {
    const p = prefix.toLowerCase();
    const matching: MemoryRecord[] = [];
    for (let offset = 0; offset < TAG_PREFIX_CAP; offset += LIST_PAGE) {
      const page = await this.repo.list(scope, { ...query, limit: LIST_PAGE, offset });
      matching.push(...page.records.filter((r) => r.tags.some((t) => t.toLowerCase().startsWith(p))));
      if (page.records.length < LIST_PAGE) break;
    }
    return { records: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
  }

  async history(scope: Scope, id: string) {
    const changes = (await this.events.history(id)).filter((c) => c.tenant === scope.tenant && c.agent === scope.agent);
    if (changes.length === 0) throw AlfredError.notFound('Memory', id);
    return { id, events: changes.map(({ tenant: _t, agent: _a, ...rest }) => rest) };
  }

  /** `checked[i]` is the text the injection check runs on (a conversation message as said, not as stored). */
  private async createMany(
    scope: Scope,
    bodies: readonly MemoryCreateBody[],
    source: MemorySource,
    writer: Writer | undefined,
    checked: readonly string[],
    contexts?: readonly string[],
  ): Promise<MemoryCreated[]> {
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
      written: writtenBy(writer, at, checked[i] ?? b.content),
    }));
    const vectors = await this.embedder.embed(records.map((r) => r.content));
    // Embedding may retry for long; a caller already told 504 must not find the memories stored after all.
    assertBeforeDeadline('the memories were stored');
    // Ids from an Idempotency-Key may exist already (a retry after a crash between store and answer): upsert them.
    await this.changes.commit(
      records.map((r) => change('created', scope, r)),
      [this.repo.saveWrite(scope, records, vectors, key ? 'upsert' : 'insert')],
    );
    for (const r of records) this.cache.remember(scope, r);
    return records.map((r) => {
      const { id, timestamp, content, importance, tags, provenance, trust } = toMemory(scope, r);
      return { id, timestamp, content, importance, tags, provenance, trust };
    });
  }

  private async deleteRecords(scope: Scope, records: readonly MemoryRecord[]) {
    if (records.length === 0) return;
    assertBeforeDeadline('the memories were deleted');
    const at = this.now().toISOString();
    const deleted = records.map((r) => change('deleted', scope, { ...r, version: r.version + 1, updated_at: at }));
    const ids = records.map((r) => r.id);
    await this.changes.commit(deleted, [this.repo.deleteWrite(scope, ids)]).finally(() => {
      for (const r of records) this.cache.evict(scope.tenant, scope.agent, r.id);
    });
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
function change(
  kind: 'created' | 'updated' | 'deleted',
  scope: Scope,
  r: MemoryRecord,
): ChangeEvent<(typeof MemoryEvents)[typeof kind]> {
  const payload: MemoryChange = {
    kind,
    id: r.id,
    tenant: scope.tenant,
    agent: scope.agent,
    version: r.version,
    at: r.updated_at ?? r.timestamp,
    ...(kind === 'deleted' ? {} : { memory: toMemory(scope, r) }),
  };
  return {
    event: MemoryEvents[kind],
    payload,
    key: r.id,
    ...(kind === 'created' ? { msgId: `${r.id}:1:created` } : {}),
  };
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
