import { z } from 'zod';
import {
  AGENT_FILE_MAX,
  AgentFileHistory,
  AgentFileKind,
  AgentFileRestored,
  AgentFileVersionView,
  AgentFileView,
  AgentFileWriteBody,
  AgentFileWritten,
  EditableAgentFile,
} from './agent-files.js';
import { AgentName, IsoTimestamp, Scope, TenantId } from './common.js';
import { route, ServiceName } from './route.js';
import { Writer } from './provenance.js';
import {
  SessionAppendResult,
  SessionDeleted,
  SessionId,
  SessionList,
  SessionMessage,
  SessionMetadata,
  SessionTokens,
  SessionView,
} from './sessions.js';

export const OBSERVATION_MAX = 10_000;
export const INSTRUCTIONS_MAX = 4_000;

// ---------- /distill ----------

/** POST /distill body (seed: scope defaults to recent). */
export const DistillBody = z.strictObject({
  scope: z.enum(['recent', 'all'], { error: 'scope must be recent or all' }).default('recent'),
  focus: z.string().trim().min(1, 'focus cannot be empty').max(500).optional(),
  since: IsoTimestamp.optional(),
});
export type DistillBody = z.infer<typeof DistillBody>;

/** The seed's 200 answer of /distill (and a completed job's result). */
export const DistillCompleted = z.object({
  status: z.literal('completed'),
  insights_added: z.number().int().min(0),
  memory_file: z.string(),
  processed_memories: z.number().int().min(0),
  duration_ms: z.number().int().min(0),
  /** Where the insights came from: the model, or the deterministic clustering fallback. */
  method: z.enum(['model', 'clustering']).optional(),
});
export type DistillCompleted = z.infer<typeof DistillCompleted>;

/** The seed's 202 answer: the work goes on as a job. */
export const DistillAccepted = z.object({ status: z.literal('processing'), job_id: z.string() });
export const DistillReply = z.discriminatedUnion('status', [DistillCompleted, DistillAccepted]);
export type DistillReply = z.infer<typeof DistillReply>;

export const JobId = z.string().regex(/^job-[a-z]+-[0-9a-f]{32}$/, 'not a job id');
/** `stalled`: it was running, but its worker stopped heartbeating (killed, cut off); it is delivered again shortly. */
export const JobStatus = z.enum(['queued', 'running', 'stalled', 'completed', 'failed']);
export type JobStatus = z.infer<typeof JobStatus>;

/** GET /jobs/{id}: the state of async work, visible only to the tenant and agent that started it. */
export const JobView = z.object({
  job_id: z.string(),
  kind: z.literal('distill'),
  agent: z.string(),
  status: JobStatus,
  attempts: z.number().int().min(0),
  request: DistillBody,
  result: DistillCompleted.nullable(),
  error: z.string().nullable(),
  /** When the worker running it last said it was alive (while running or stalled). */
  heartbeat_at: IsoTimestamp.nullable().optional(),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
});
export type JobView = z.infer<typeof JobView>;

// ---------- /learn ----------

const codeIssue = (alfredCode: string, message: string) => ({ message, params: { alfredCode } });

/** POST /learn body: a bad target is 400 INVALID_TARGET, an empty or missing observation 422 INVALID_OBSERVATION. */
export const LearnBody = z.strictObject({
  target: z
    .unknown()
    .refine((t) => t === 'user' || t === 'soul', codeIssue('INVALID_TARGET', 'target must be "user" or "soul"'))
    .transform((t) => t as 'user' | 'soul'),
  observation: z
    .unknown()
    .refine(
      (o) => typeof o === 'string' && o.trim().length > 0,
      codeIssue('INVALID_OBSERVATION', 'Observation cannot be empty'),
    )
    .transform((o) => (o as string).trim())
    .pipe(z.string().max(OBSERVATION_MAX)),
  confidence: z
    .number()
    .min(0, 'confidence must be between 0.0 and 1.0')
    .max(1, 'confidence must be between 0.0 and 1.0')
    .optional(),
});
export type LearnBody = z.infer<typeof LearnBody>;

export const LearnUpdated = z.object({
  status: z.literal('updated'),
  file: z.string(),
  changes: z.array(z.string()),
  /** The version kept from before the change, e.g. `USER.md@v3` (restore it with POST .../restore). */
  backup_created: z.string(),
  version: z.number().int().min(1),
});
export const LearnNoChange = z.object({
  status: z.literal('no_change'),
  file: z.string(),
  reason: z.string(),
  /** Set when a low-confidence observation was recorded as a pending memory instead of changing the file. */
  pending_memory_id: z.string().optional(),
});
export const LearnResult = z.discriminatedUnion('status', [LearnUpdated, LearnNoChange]);
export type LearnResult = z.infer<typeof LearnResult>;

// ---------- /compact ----------

/** POST /compact body; the session may instead be named by the X-Alfred-Session header. */
export const CompactBody = z.strictObject({
  session_id: SessionId.optional(),
  instructions: z.string().max(INSTRUCTIONS_MAX).optional(),
  preserve_recent: z.number().int().min(0, 'preserve_recent must be 0 or more').max(10_000).optional(),
});
export type CompactBody = z.infer<typeof CompactBody>;

export const CompactResult = z.object({
  status: z.literal('completed'),
  tokens_before: z.number().int().min(0),
  tokens_after: z.number().int().min(0),
  tokens_saved: z.number().int(),
  summary: z.string(),
  messages_compacted: z.number().int().min(0),
  /** `model` (count-tokens endpoint) or `estimate` (see the summary and #text's estimateTokens). */
  token_source: z.enum(['model', 'estimate']),
  /** The session version after compaction. */
  session_version: z.number().int().min(0),
});
export type CompactResult = z.infer<typeof CompactResult>;

// ---------- bus routes ----------

const scoped = <T extends z.ZodRawShape>(shape: T) => z.object({ scope: Scope, ...shape });

/** Sessions, served by agent-runtime (any instance can read and extend any session). */
export const SessionRoutes = {
  create: route(
    ServiceName.AgentRuntime,
    'session-create',
    scoped({ metadata: SessionMetadata.optional() }),
    SessionView,
  ),
  get: route(ServiceName.AgentRuntime, 'session-get', scoped({ id: SessionId }), SessionView),
  append: route(
    ServiceName.AgentRuntime,
    'session-append',
    scoped({ id: SessionId, messages: z.array(SessionMessage).min(1) }),
    SessionAppendResult,
  ),
  delete: route(ServiceName.AgentRuntime, 'session-delete', scoped({ id: SessionId }), SessionDeleted),
  /** The agent a session of the tenant belongs to (a session implies its agent); NOT_FOUND when none has it. */
  locate: route(
    ServiceName.AgentRuntime,
    'session-locate',
    z.object({ tenant: TenantId, id: SessionId }),
    z.object({ agent: AgentName }),
  ),
  /** Replaces the messages (compaction) if the session is still at `expected_version`; CONFLICT when it moved. */
  replace: route(
    ServiceName.AgentRuntime,
    'session-replace',
    scoped({
      id: SessionId,
      messages: z.array(SessionMessage),
      expected_version: z.number().int().min(0),
      tokens: SessionTokens.omit({ at_version: true }).optional(),
    }),
    z.object({ version: z.number().int().min(1) }),
  ),
  list: route(
    ServiceName.AgentRuntime,
    'session-list',
    scoped({ limit: z.number().int().min(1).max(100).default(20), offset: z.number().int().min(0).default(0) }),
    SessionList,
  ),
} as const;

export const CompactorRoutes = {
  compact: route(
    ServiceName.Compactor,
    'compact',
    scoped({
      session_id: SessionId,
      instructions: z.string().max(INSTRUCTIONS_MAX).optional(),
      preserve_recent: z.number().int().min(0).optional(),
      /**
       * The compacted session must fit in about this many tokens (an agent turn near its context window): the
       * recent tail kept verbatim is chosen by size, not count, and the summary and its input are bounded by it.
       */
      target_tokens: z.number().int().min(200).optional(),
    }),
    CompactResult,
  ),
} as const;

export const DistillerRoutes = {
  /** Starts (or joins an identical running) job and waits briefly: completed, or processing with its job id. */
  distill: route(ServiceName.Distiller, 'distill', scoped({ request: DistillBody }), DistillReply),
  job: route(ServiceName.Distiller, 'job', scoped({ id: z.string().min(1).max(128) }), JobView),
} as const;

const fileRef = scoped({ file: AgentFileKind });

/** Learning, served by the learner (it reads and writes the agent files through AgentFileRoutes). */
export const LearnerRoutes = {
  learn: route(ServiceName.Learner, 'learn', scoped({ request: LearnBody }), LearnResult),
} as const;

/** The versioned agent files, owned by agent-runtime: the gateway, the learner and the distiller reach them here. */
export const AgentFileRoutes = {
  get: route(ServiceName.AgentRuntime, 'file-get', fileRef, AgentFileView),
  history: route(ServiceName.AgentRuntime, 'file-history', fileRef, AgentFileHistory),
  version: route(
    ServiceName.AgentRuntime,
    'file-version',
    scoped({ file: AgentFileKind, version: z.number().int().min(1) }),
    AgentFileVersionView,
  ),
  restore: route(
    ServiceName.AgentRuntime,
    'file-restore',
    scoped({
      file: AgentFileKind,
      version: z.number().int().min(1),
      expected_version: z.number().int().min(0).optional(),
      writer: Writer.optional(),
    }),
    AgentFileRestored,
  ),
  /**
   * A person's edit: refused with CONFLICT (details carry the current text) when the file moved past expected_version.
   */
  edit: route(
    ServiceName.AgentRuntime,
    'file-edit',
    scoped({ file: EditableAgentFile, request: AgentFileWriteBody, writer: Writer }),
    AgentFileWritten,
  ),
  /**
   * A service's write (learning, distillation): a new version with its reason; CONFLICT when expected_version moved.
   */
  write: route(
    ServiceName.AgentRuntime,
    'file-write',
    scoped({
      file: AgentFileKind,
      content: z.string().max(AGENT_FILE_MAX),
      reason: z.string().max(1_000),
      expected_version: z.number().int().min(0).optional(),
      writer: Writer.optional(),
    }),
    z.object({ version: z.number().int().min(1) }),
  ),
} as const;

/** GET /sessions query. */
export const SessionListQuery = z.strictObject({
  /** Whose sessions (overrides X-Alfred-Agent; both given must agree). */
  agent: AgentName.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
