import { z } from 'zod';
import { Provenance, ProvenanceFilter, TrustMark, Writer } from './provenance.js';
import { IsoTimestamp, Scope, queryInt } from './common.js';
import { Pagination } from './memory.js';
import { event, route, ServiceName } from './route.js';
import { SessionId } from './sessions.js';

export const CHECKPOINT_TEXT_MAX = 20_000;
export const CHECKPOINT_ITEMS_MAX = 100;
/** How many of the referenced session's latest messages a `context` resume carries. */
export const CHECKPOINT_CONTEXT_MESSAGES = 20;

const Item = z.string().trim().min(1, 'items cannot be empty').max(2_000);
const Tag = z.string().trim().min(1, 'tags cannot be empty strings').max(100);

/** POST /checkpoints body; the session (if any) is kept by reference: its id, version and message count. */
export const CheckpointSaveBody = z.strictObject({
  name: z.string().trim().min(1, 'name cannot be empty').max(200),
  session_id: SessionId.optional(),
  summary: z.string().trim().min(1, 'summary cannot be empty').max(CHECKPOINT_TEXT_MAX),
  done: z.array(Item).max(CHECKPOINT_ITEMS_MAX).default([]),
  next: z.array(Item).max(CHECKPOINT_ITEMS_MAX).default([]),
  tags: z.array(Tag).max(64).default([]),
});
export type CheckpointSaveBody = z.infer<typeof CheckpointSaveBody>;

export const CheckpointId = z.string().min(1).max(128);

/** The referenced session as it was at save time; `digest` (SHA-256 of those messages) detects later rewrites. */
export const CheckpointSessionRef = z.object({
  id: SessionId,
  version: z.number().int().min(0),
  message_count: z.number().int().min(0),
  digest: z.string(),
});

/** A stored checkpoint as the API shows it. */
export const Checkpoint = z.object({
  id: z.string(),
  name: z.string(),
  summary: z.string(),
  done: z.array(z.string()),
  next: z.array(z.string()),
  tags: z.array(z.string()),
  session: CheckpointSessionRef.nullable(),
  created_at: IsoTimestamp,
  /** Who wrote it and the injection check's mark (additional fields). */
  provenance: Provenance.optional(),
  trust: TrustMark.optional(),
});
export type Checkpoint = z.infer<typeof Checkpoint>;

/** GET /checkpoints query: newest first; filters on provenance and trust as GET /memories has them. */
export const CheckpointListQuery = z.strictObject({
  limit: queryInt(1, 100, 20),
  offset: z.coerce.number().int().min(0).default(0),
  tag: z.string().min(1).max(100).optional(),
  ...ProvenanceFilter,
});
export type CheckpointListQuery = z.infer<typeof CheckpointListQuery>;

export const CheckpointList = z.object({ checkpoints: z.array(Checkpoint), pagination: Pagination });

export const ResumeLevel = z.enum(['summary', 'context', 'full'], { error: 'level must be summary, context or full' });
export type ResumeLevel = z.infer<typeof ResumeLevel>;

/** POST /checkpoints/{id}/resume body. */
export const CheckpointResumeBody = z.strictObject({ level: ResumeLevel.default('summary') });

/** The new session a resume started. */
export const CheckpointResumed = z.object({
  checkpoint_id: z.string(),
  level: ResumeLevel,
  session_id: SessionId,
  message_count: z.number().int().min(0),
  session_version: z.number().int().min(0),
});
export type CheckpointResumed = z.infer<typeof CheckpointResumed>;

export const CHECKPOINT_STREAM = 'ALFRED_CHECKPOINT';

/** One checkpoint change as kept on its stream (checkpoints are immutable; deletes come later). */
export const CheckpointChange = z.object({
  kind: z.enum(['saved']),
  id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  at: z.string(),
  checkpoint: Checkpoint,
});
export type CheckpointChange = z.infer<typeof CheckpointChange>;

/** Checkpoint events; the checkpoint id follows the subject as one more token. */
export const CheckpointEvents = {
  saved: event('checkpoint', 'saved', CHECKPOINT_STREAM, CheckpointChange),
} as const;

const scoped = <T extends z.ZodRawShape>(shape: T) => z.object({ scope: Scope, ...shape });
const M = ServiceName.Memory;

/** Checkpoints, served by the memory service. */
export const CheckpointRoutes = {
  save: route(M, 'checkpoint-save', scoped({ checkpoint: CheckpointSaveBody, writer: Writer.optional() }), Checkpoint),
  list: route(M, 'checkpoint-list', scoped({ query: CheckpointListQuery }), CheckpointList),
  get: route(M, 'checkpoint-get', scoped({ id: CheckpointId }), Checkpoint),
  resume: route(M, 'checkpoint-resume', scoped({ id: CheckpointId, level: ResumeLevel }), CheckpointResumed),
} as const;
