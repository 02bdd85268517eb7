import { z } from 'zod';
import { IsoDate, IsoTimestamp, Scope, ScoreExplanation, queryBool, queryInt } from './common.js';
import { FeedbackBody, FeedbackCounts, FeedbackResult } from './feedback.js';
import { ProvenanceFilter, Provenance, TrustMark, Writer } from './provenance.js';
import { event, route, ServiceName } from './route.js';

export const MEMORY_CONTENT_MAX = 100_000;
export const MEMORY_TAGS_MAX = 64;
export const MEMORY_BATCH_MAX = 500;

export const MemorySource = z.enum(['daily', 'memory']);
export type MemorySource = z.infer<typeof MemorySource>;

const Content = z
  .string()
  .max(MEMORY_CONTENT_MAX)
  .refine((s) => s.trim().length > 0, {
    message: 'Content cannot be empty',
    params: { alfredCode: 'INVALID_CONTENT' },
  });
const Importance = z
  .number()
  .min(0, 'importance must be between 0.0 and 1.0')
  .max(1, 'importance must be between 0.0 and 1.0');
const Tag = z.string().trim().min(1, 'tags cannot be empty strings').max(100);
const Tags = z.array(Tag).max(MEMORY_TAGS_MAX);

/** POST /memories body (and each item of POST /memories/batch). */
export const MemoryCreateBody = z.strictObject({
  content: Content,
  importance: Importance.default(0.5),
  tags: Tags.default([]),
});
export type MemoryCreateBody = z.infer<typeof MemoryCreateBody>;

/** PUT /memories/{id} body: only provided fields change. */
export const MemoryUpdateBody = z.strictObject({
  content: Content.optional(),
  importance: Importance.optional(),
  tags: Tags.optional(),
});
export type MemoryUpdateBody = z.infer<typeof MemoryUpdateBody>;

export const MemoryId = z.string().min(1).max(128);

/** A stored memory as the API shows it. */
export const Memory = z.object({
  id: z.string(),
  content: z.string(),
  date: z.string(),
  timestamp: z.string(),
  updated_at: z.string().optional(),
  importance: z.number(),
  tags: z.array(z.string()),
  source: MemorySource,
  /** Helpful / unhelpful reports (POST /memories/{id}/feedback); absent until the first one. */
  feedback: FeedbackCounts.optional(),
  /** Who wrote it (additional field; absent on memories written before provenance was recorded). */
  provenance: Provenance.optional(),
  /** The injection check's mark (additional field). */
  trust: TrustMark.optional(),
});
export type Memory = z.infer<typeof Memory>;

/**
 * The create/batch-create answer for one memory (seed: id, timestamp, content, importance, tags; ours: provenance,
 * trust).
 */
export const MemoryCreated = Memory.pick({
  id: true,
  timestamp: true,
  content: true,
  importance: true,
  tags: true,
  provenance: true,
  trust: true,
});
export type MemoryCreated = z.infer<typeof MemoryCreated>;

export const MemoryUpdated = MemoryCreated.extend({ updated_at: z.string() });

export const MemoryDeleted = z.object({ id: z.string(), deleted: z.literal(true), timestamp: z.string() });

export const MemoryBatchCreateBody = z.strictObject({
  memories: z.array(z.unknown()).min(1, 'Memories array cannot be empty').max(MEMORY_BATCH_MAX),
});
export const MemoryBatchCreateResult = z.object({
  created: z.number().int(),
  memories: z.array(MemoryCreated),
  errors: z.array(z.object({ index: z.number().int(), error: z.string() })),
});

/** One message of a conversation: who said it, what, and (optionally) when. */
export const ConversationMessage = z.strictObject({
  speaker: z.string().trim().min(1, 'speaker cannot be empty').max(200),
  content: Content,
  time: IsoTimestamp.optional(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/**
 * POST /conversations: messages in the order they were said. Each becomes a memory "speaker: content"
 * indexed with the messages around it and its date as context (found through them, shown without them).
 */
export const ConversationIngestBody = z.strictObject({
  conversation_id: z.string().trim().min(1).max(128).optional(),
  messages: z.array(ConversationMessage).min(1, 'messages cannot be empty').max(MEMORY_BATCH_MAX),
  importance: Importance.default(0.5),
  tags: Tags.default([]),
});
export type ConversationIngestBody = z.infer<typeof ConversationIngestBody>;

export const ConversationIngestResult = z.object({
  conversation_id: z.string(),
  created: z.number().int(),
  memories: z.array(MemoryCreated),
});

export const MemoryBatchDeleteBody = z.strictObject({
  ids: z.array(MemoryId).min(1, 'IDs array cannot be empty').max(1000),
});
export const MemoryBatchDeleteResult = z.object({
  deleted: z.number().int(),
  not_found: z.array(z.string()),
  timestamp: z.string(),
});

export const MemoryListQuery = z.strictObject({
  date: IsoDate.optional(),
  tag: z.string().min(1).max(100).optional(),
  /** Memories with a tag that starts with this (any case); looks at the first 5,000 in the list's order. */
  tag_prefix: z.string().min(1).max(100).optional(),
  source: MemorySource.optional(),
  limit: queryInt(1, 100, 20),
  offset: z.coerce.number().int().min(0).default(0),
  sort_by: z.enum(['date', 'importance']).default('date'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
  ...ProvenanceFilter,
});
export type MemoryListQuery = z.infer<typeof MemoryListQuery>;

export const Pagination = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
});

export const MemoryList = z.object({ memories: z.array(Memory), pagination: Pagination });

export const SearchQuery = z.strictObject({
  q: z.string().trim().min(1, 'Query cannot be empty').max(2000),
  limit: queryInt(1, 50, 10),
  min_score: z.coerce.number().min(0).max(1).default(0),
  source: MemorySource.optional(),
  /** Adds each result's per-signal score breakdown (`explanation`). */
  explain: queryBool(),
  ...ProvenanceFilter,
});
export type SearchQuery = z.infer<typeof SearchQuery>;

export const SearchResult = Memory.extend({
  score: z.number().min(0).max(1),
  explanation: ScoreExplanation.optional(),
});
export const SearchResponse = z.object({
  results: z.array(SearchResult),
  query: z.string(),
  total: z.number().int(),
  search_time_ms: z.number(),
});
export type SearchResponse = z.infer<typeof SearchResponse>;

export const MemoryEventKind = z.enum(['created', 'updated', 'deleted', 'feedback']);

/** One change of one memory, as kept on the memory event stream. */
export const MemoryChange = z.object({
  kind: MemoryEventKind,
  id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  version: z.number().int().min(1),
  at: z.string(),
  memory: Memory.optional(),
  /**
   * Set on `feedback` events, whose `version` counts the reports so far: the report and the counts after it (the memory
   * is unchanged).
   */
  feedback: z.object({ helpful: z.boolean(), note: z.string().optional(), counts: FeedbackCounts }).optional(),
});
export type MemoryChange = z.infer<typeof MemoryChange>;

export const MemoryHistory = z.object({
  id: z.string(),
  events: z.array(MemoryChange.omit({ tenant: true, agent: true })),
});

export const MEMORY_STREAM = 'ALFRED_MEMORY';

/** Memory events; the memory id follows the subject as one more token. */
export const MemoryEvents = {
  created: event('memory', 'created', MEMORY_STREAM, MemoryChange),
  updated: event('memory', 'updated', MEMORY_STREAM, MemoryChange),
  deleted: event('memory', 'deleted', MEMORY_STREAM, MemoryChange),
  feedback: event('memory', 'rated', MEMORY_STREAM, MemoryChange),
} as const;

/**
 * Writes of many memories at once (up to MEMORY_BATCH_MAX, each embedded, one outbox change) get this long instead of
 * the bus's 5 s: 500 texts through a remote embedder, or a busy disk's fsyncs, need more, and a client told 504 for a
 * write that then completes would only retry it.
 */
export const MANY_WRITE_TIMEOUT_MS = 60_000;

const scoped = <T extends z.ZodRawShape>(shape: T) => z.object({ scope: Scope, ...shape });
const M = ServiceName.Memory;

/** Memory service operations. */
export const MemoryRoutes = {
  create: route(
    M,
    'create',
    scoped({ memory: MemoryCreateBody, source: MemorySource.default('daily'), writer: Writer.optional() }),
    MemoryCreated,
  ),
  batchCreate: route(
    M,
    'batch-create',
    scoped({
      memories: z.array(z.unknown()).min(1).max(MEMORY_BATCH_MAX),
      source: MemorySource.default('daily'),
      writer: Writer.optional(),
    }),
    MemoryBatchCreateResult,
    { timeoutMs: MANY_WRITE_TIMEOUT_MS },
  ),
  ingestConversation: route(
    M,
    'conversation-ingest',
    scoped({ conversation: ConversationIngestBody, writer: Writer.optional() }),
    ConversationIngestResult,
    { timeoutMs: MANY_WRITE_TIMEOUT_MS },
  ),
  get: route(M, 'get', scoped({ id: MemoryId }), Memory),
  update: route(M, 'update', scoped({ id: MemoryId, patch: MemoryUpdateBody }), MemoryUpdated),
  delete: route(M, 'delete', scoped({ id: MemoryId }), MemoryDeleted),
  batchDelete: route(M, 'batch-delete', scoped({ ids: MemoryBatchDeleteBody.shape.ids }), MemoryBatchDeleteResult),
  list: route(M, 'list', scoped({ query: MemoryListQuery }), MemoryList),
  search: route(M, 'search', scoped({ query: SearchQuery }), SearchResponse),
  history: route(M, 'history', scoped({ id: MemoryId }), MemoryHistory),
  feedback: route(M, 'feedback', scoped({ id: MemoryId, feedback: FeedbackBody }), FeedbackResult),
  /** Deletes everything the memory service holds for one agent (its agent is being deleted). */
  purgeAgent: route(
    M,
    'purge-agent',
    scoped({}),
    z.object({
      memories: z.number().int().min(0),
      checkpoints: z.number().int().min(0),
      remediations: z.number().int().min(0),
    }),
    { timeoutMs: 120_000 },
  ),
  reindex: route(
    M,
    'reindex',
    z.object({}),
    z.object({ reindexed: z.number().int(), embedder: z.string(), duration_ms: z.number() }),
    // An operator command over every tenant's stored data (re-embedding), never reachable through the API.
    { global: true },
  ),
} as const;
