import { z } from 'zod';
import {
  AgentCreateBody,
  AgentDeleteQuery,
  AgentFileRestoreBody,
  AgentFileWriteBody,
  AgentName,
  AgentPatchBody,
  AgentRoutes,
  ApiInfo,
  ChannelRoutes,
  CheckpointId,
  CheckpointListQuery,
  CheckpointResumeBody,
  CheckpointRoutes,
  CheckpointSaveBody,
  CompactBody,
  CompactorRoutes,
  ConfirmBody,
  ConversationIngestBody,
  DistillBody,
  DistillerRoutes,
  ExecutableSkillConsentBody,
  ExecutableSkillCreateBody,
  ExecutableSkillListQuery,
  ExecutableSkillPatch,
  ExecutableSkillRoutes,
  FeedbackBody,
  Health,
  ModelStatus,
  LearnBody,
  AgentFileRoutes,
  LearnerRoutes,
  MetricsHistory,
  MemoryBatchCreateBody,
  MemoryBatchDeleteBody,
  MemoryCreateBody,
  MemoryId,
  MemoryListQuery,
  MemoryRoutes,
  MemoryUpdateBody,
  RecallQuery,
  RecallRoutes,
  RemediationId,
  RemediationRecordBody,
  RemediationRoutes,
  RemediationSearchQuery,
  SearchQuery,
  SessionAppendBody,
  SessionCreateBody,
  SessionId,
  TenantUsage,
  SessionListQuery,
  SessionRoutes,
  SkillCreateBody,
  SkillFeedbackBody,
  SkillExecutionsQuery,
  SkillId,
  SkillIndexQuery,
  SkillIndexText,
  SkillDeleteQuery,
  SkillInstallBody,
  SkillInstallRoutes,
  SkillUpdateBody,
  SkillSourceUpdateBody,
  SkillPathName,
  SkillResourcePath,
  SkillRoutes,
  SkillRunnerRoutes,
  SkillSearchQuery,
  TelegramUpdate,
  TenantId,
  TurnBody,
  TurnResult,
  TurnRoutes,
} from '#contracts';

/** A schema the API documents as it is, or an HTTP-only media type that JSON Schema does not describe. */
export type Content = z.ZodType | { readonly mediaType: string; readonly description: string };

/** One HTTP operation of the gateway, described with the same zod contracts its controller validates with. */
export interface Operation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify's pattern (`/memories/:id`; `*` is a path that may contain slashes). */
  readonly path: string;
  readonly summary: string;
  readonly params?: Readonly<Record<string, z.ZodType>>;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  /** Successful answers by status (several media types for one status: a list). */
  readonly responses: Readonly<Record<number, Content | readonly Content[]>>;
  /** Answers without an API key (health probes, this document). */
  readonly open?: boolean;
  /** Error answers worth naming beyond the default (status: description, the body is the API error format). */
  readonly errors?: Readonly<Record<number, string>>;
}

const mcpRefusal = { mediaType: 'application/json', description: 'a JSON-RPC error: method not allowed' };
const FileKind = z.string().describe('user, soul or memory (or USER.md, SOUL.md, MEMORY.md, any case)');
const JobIdParam = z.string().min(1).max(128);
const ExecDeleteQuery = z.strictObject({ confirm: z.enum(['true', 'false']).default('false') });
const SkillIndexJson = SkillRoutes.index.response.omit({ rendered: true });
const BusAnswer = z.object({
  bus: z
    .enum(['in-process', 'nats'])
    .describe('in-process: one process (npm start), no broker; nats: services over NATS'),
  /**
   * The gateway's own broker connection: `reconnecting` while NATS is away (requests then get 503 with Retry-After).
   */
  dependencies: z
    .object({ nats: z.enum(['connected', 'reconnecting', 'closed']).optional() })
    .describe('brokers the gateway uses: none in-process'),
});
const HealthAnswer = Health.extend({
  services: z.record(z.string(), z.enum(['up', 'not-ready', 'down', 'absent'])),
  model: ModelStatus,
  ...BusAnswer.shape,
});
const ReadyAnswer = z.object({ ready: z.boolean(), services: z.record(z.string(), z.string()), ...BusAnswer.shape });
const sse = {
  mediaType: 'text/event-stream',
  description: 'turn events (event: <type>, data: JSON), heartbeats as comments',
};
const resp = <R extends { response: z.ZodType }>(r: R, status = 200) => ({ [status]: r.response });

/** Content with a credential is never stored (see README "What Alfred refuses or flags"). */
const secret = {
  422:
    'SECRET_DETECTED: the content holds a credential (API key, private key, token, connection string, ' +
    'password in a URL); details name each rule and position, never the secret; nothing was stored (tenants ' +
    'in ALFRED_SECRETS_REDACT_TENANTS get it redacted instead)',
};
const memId = { id: MemoryId };
const cpId = { id: CheckpointId };
const remId = { id: RemediationId };
const sessId = { id: SessionId };
const execId = { id: SkillId };
const agentFile = { agent: AgentName, file: FileKind };

/** Every operation the gateway serves; e2e/openapi.e2e-spec.ts fails when a served route is missing here. */
export const OPERATIONS: readonly Operation[] = [
  { method: 'GET', path: '/', summary: 'API information and endpoints', responses: { 200: ApiInfo } },
  {
    method: 'GET',
    path: '/health',
    summary: 'Health of the API and of each service',
    responses: { 200: HealthAnswer, 503: HealthAnswer },
    open: true,
  },
  {
    method: 'GET',
    path: '/health/live',
    summary: 'Liveness',
    responses: { 200: z.object({ live: z.literal(true) }) },
    open: true,
  },
  {
    method: 'GET',
    path: '/health/ready',
    summary: 'Readiness (the core services answer)',
    responses: { 200: ReadyAnswer, 503: ReadyAnswer },
    open: true,
  },
  {
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics of this gateway process',
    responses: { 200: { mediaType: 'text/plain', description: 'Prometheus text exposition format 0.0.4' } },
  },
  {
    method: 'GET',
    path: '/metrics/history',
    summary:
      "This gateway's last hour of request rate, 5xx rate and latency (mean, p95), one point per step, from " +
      'the counters /metrics exposes',
    responses: { 200: MetricsHistory },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    summary: 'This document',
    responses: { 200: { mediaType: 'application/json', description: 'OpenAPI 3.1' } },
    open: true,
  },

  {
    method: 'POST',
    path: '/memories',
    summary:
      'Store a memory; the answer adds provenance (who wrote it; the optional X-Alfred-Source header names ' +
      'its source) and trust (the injection check: flagged with reasons, stored but left out of automatic recall)',
    body: MemoryCreateBody,
    responses: resp(MemoryRoutes.create, 201),
    errors: secret,
  },
  {
    method: 'POST',
    path: '/memories/batch',
    summary:
      'Store many memories; invalid items, and items holding a credential (SECRET_DETECTED), are reported by ' +
      'index and the others stored',
    body: MemoryBatchCreateBody,
    responses: resp(MemoryRoutes.batchCreate, 201),
  },
  {
    method: 'POST',
    path: '/conversations',
    summary: 'Store a conversation: each message a memory, searchable with its neighbours and date as context',
    body: ConversationIngestBody,
    responses: resp(MemoryRoutes.ingestConversation, 201),
    errors: secret,
  },
  {
    method: 'GET',
    path: '/memories',
    summary: 'List memories',
    query: MemoryListQuery,
    responses: resp(MemoryRoutes.list),
  },
  {
    method: 'DELETE',
    path: '/memories',
    summary: 'Delete many memories',
    body: MemoryBatchDeleteBody,
    responses: resp(MemoryRoutes.batchDelete),
  },
  { method: 'GET', path: '/memories/:id', summary: 'One memory', params: memId, responses: resp(MemoryRoutes.get) },
  {
    method: 'PUT',
    path: '/memories/:id',
    summary: 'Update the given fields of a memory',
    params: memId,
    body: MemoryUpdateBody,
    responses: resp(MemoryRoutes.update),
    errors: secret,
  },
  {
    method: 'DELETE',
    path: '/memories/:id',
    summary: 'Delete a memory',
    params: memId,
    responses: resp(MemoryRoutes.delete),
  },
  {
    method: 'GET',
    path: '/memories/:id/history',
    summary: 'Every change of a memory',
    params: memId,
    responses: resp(MemoryRoutes.history),
  },
  {
    method: 'POST',
    path: '/memories/:id/feedback',
    summary: 'Whether a memory helped',
    params: memId,
    body: FeedbackBody,
    responses: resp(MemoryRoutes.feedback),
  },
  {
    method: 'GET',
    path: '/search',
    summary: 'Hybrid search over memories',
    query: SearchQuery,
    responses: resp(MemoryRoutes.search),
  },

  {
    method: 'POST',
    path: '/checkpoints',
    summary: 'Save a checkpoint',
    body: CheckpointSaveBody,
    responses: resp(CheckpointRoutes.save, 201),
    errors: secret,
  },
  {
    method: 'GET',
    path: '/checkpoints',
    summary: 'Checkpoints, newest first',
    query: CheckpointListQuery,
    responses: resp(CheckpointRoutes.list),
  },
  {
    method: 'GET',
    path: '/checkpoints/:id',
    summary: 'One checkpoint',
    params: cpId,
    responses: resp(CheckpointRoutes.get),
  },
  {
    method: 'POST',
    path: '/checkpoints/:id/resume',
    summary: 'Start a session from a checkpoint',
    params: cpId,
    body: CheckpointResumeBody,
    responses: resp(CheckpointRoutes.resume, 201),
  },
  {
    method: 'POST',
    path: '/remediations',
    summary: 'Record an error and its fix',
    body: RemediationRecordBody,
    responses: resp(RemediationRoutes.record, 201),
    errors: secret,
  },
  {
    method: 'GET',
    path: '/remediations/search',
    summary: 'Fixes for an error text',
    query: RemediationSearchQuery,
    responses: resp(RemediationRoutes.search),
  },
  {
    method: 'GET',
    path: '/remediations/:id',
    summary: 'One remediation',
    params: remId,
    responses: resp(RemediationRoutes.get),
  },
  {
    method: 'POST',
    path: '/remediations/:id/feedback',
    summary: 'Whether a fix helped',
    params: remId,
    body: FeedbackBody,
    responses: resp(RemediationRoutes.feedback),
  },
  {
    method: 'GET',
    path: '/recall',
    summary: 'Memories, fixes and skills in one ranked list within a token budget',
    query: RecallQuery,
    responses: resp(RecallRoutes.recall),
  },

  {
    method: 'POST',
    path: '/distill',
    summary: 'Distill insights into MEMORY.md (202 with a job id when it takes longer)',
    body: DistillBody,
    responses: { 200: DistillerRoutes.distill.response, 202: DistillerRoutes.distill.response },
  },
  {
    method: 'POST',
    path: '/learn',
    summary: 'Update USER.md or SOUL.md from an observation',
    body: LearnBody,
    responses: resp(LearnerRoutes.learn),
    errors: secret,
  },
  {
    method: 'POST',
    path: '/compact',
    summary: 'Compact a session (session_id or X-Alfred-Session)',
    body: CompactBody,
    responses: resp(CompactorRoutes.compact),
  },
  {
    method: 'GET',
    path: '/jobs/:id',
    summary: 'Status and result of async work',
    params: { id: JobIdParam },
    responses: resp(DistillerRoutes.job),
  },
  {
    method: 'GET',
    path: '/agents/:agent/files/:file',
    summary: 'An agent file',
    params: agentFile,
    responses: resp(AgentFileRoutes.get),
  },
  {
    method: 'GET',
    path: '/agents/:agent/files/:file/history',
    summary: 'Every version of an agent file',
    params: agentFile,
    responses: resp(AgentFileRoutes.history),
  },
  {
    method: 'GET',
    path: '/agents/:agent/files/:file/history/:version',
    summary: 'One kept version of an agent file, with its text',
    params: { ...agentFile, version: z.coerce.number().int().min(1) },
    responses: resp(AgentFileRoutes.version),
  },
  {
    method: 'PUT',
    path: '/agents/:agent/files/:file',
    summary: 'Edit USER.md or SOUL.md (409 with the newer text when it changed since expected_version)',
    params: agentFile,
    body: AgentFileWriteBody,
    responses: resp(AgentFileRoutes.edit),
    errors: {
      ...secret,
      409:
        'CONFLICT: the file changed since expected_version; details.current has the newer version and ' +
        'text, and nothing was saved',
    },
  },
  {
    method: 'POST',
    path: '/agents/:agent/files/:file/restore',
    summary: 'Restore an earlier version',
    params: agentFile,
    body: AgentFileRestoreBody,
    responses: resp(AgentFileRoutes.restore),
  },

  {
    method: 'POST',
    path: '/sessions',
    summary: 'Create a session',
    body: SessionCreateBody,
    responses: resp(SessionRoutes.create, 201),
  },
  {
    method: 'GET',
    path: '/sessions',
    summary: "The agent's sessions",
    query: SessionListQuery,
    responses: resp(SessionRoutes.list),
  },
  {
    method: 'GET',
    path: '/sessions/:id',
    summary: 'A session with its messages',
    params: sessId,
    responses: resp(SessionRoutes.get),
  },
  {
    method: 'DELETE',
    path: '/sessions/:id',
    summary: 'Delete a session',
    params: sessId,
    responses: resp(SessionRoutes.delete),
  },
  {
    method: 'POST',
    path: '/sessions/:id/messages',
    summary: 'Append messages',
    params: sessId,
    body: SessionAppendBody,
    responses: resp(SessionRoutes.append),
  },
  {
    method: 'POST',
    path: '/sessions/:id/turns',
    summary: 'Run an agent turn: SSE, or JSON with Accept: application/json or "stream": false',
    params: sessId,
    body: TurnBody,
    responses: { 200: [TurnResult, sse] },
  },
  {
    method: 'DELETE',
    path: '/sessions/:id/turns/current',
    summary: 'Cancel the running turn',
    params: sessId,
    responses: resp(TurnRoutes.cancel),
  },
  {
    method: 'POST',
    path: '/sessions/:id/confirm',
    summary: 'Answer a confirmation request of a running turn',
    params: sessId,
    body: ConfirmBody,
    responses: resp(TurnRoutes.confirm),
  },
  {
    method: 'GET',
    path: '/usage',
    summary: "The tenant's disk use against its quotas: agent workspaces (each and together) and skill data",
    responses: { 200: TenantUsage },
  },
  {
    method: 'POST',
    path: '/agents',
    summary: 'Create a named agent',
    body: AgentCreateBody,
    responses: resp(AgentRoutes.create, 201),
  },
  { method: 'GET', path: '/agents', summary: 'Named agents', responses: resp(AgentRoutes.list) },
  {
    method: 'GET',
    path: '/agents/:name',
    summary: 'One agent',
    params: { name: AgentName },
    responses: resp(AgentRoutes.get),
  },
  {
    method: 'PATCH',
    path: '/agents/:name',
    summary: 'Change an agent',
    params: { name: AgentName },
    body: AgentPatchBody,
    responses: resp(AgentRoutes.patch),
  },
  {
    method: 'DELETE',
    path: '/agents/:name',
    summary: 'Delete an agent and its data (?confirm={name})',
    params: { name: AgentName },
    query: AgentDeleteQuery,
    responses: resp(AgentRoutes.delete),
  },

  {
    method: 'GET',
    path: '/skills',
    summary: 'The level-1 skills index (?format=json|markdown|xml)',
    query: SkillIndexQuery,
    responses: { 200: z.union([SkillIndexJson, SkillIndexText]) },
  },
  {
    method: 'POST',
    path: '/skills',
    summary: 'Create a project skill',
    body: SkillCreateBody,
    responses: resp(SkillRoutes.create, 201),
    errors: secret,
  },
  {
    method: 'POST',
    path: '/skills/:name/feedback',
    summary:
      'Record one outcome of a use of the skill (success true/false); the smoothed success estimate ranks ' +
      'skill search and the index under a budget',
    params: { name: SkillPathName },
    body: SkillFeedbackBody,
    responses: resp(SkillRoutes.feedback),
  },
  {
    method: 'GET',
    path: '/skills/search',
    summary: 'Hybrid search over skills',
    query: SkillSearchQuery,
    responses: resp(SkillRoutes.search),
  },
  {
    method: 'POST',
    path: '/skills/reload',
    summary: 'Re-discover skills on disk',
    responses: resp(SkillRoutes.reload),
  },
  {
    method: 'POST',
    path: '/skills/install',
    summary:
      'Install the skills of a git repository into this tenant, pinned to the resolved commit (dry_run: check only)',
    body: SkillInstallBody,
    responses: resp(SkillInstallRoutes.install),
  },
  {
    method: 'POST',
    path: '/skills/update',
    summary: "Move every skill installed from `source` (or from every source) to its ref's newest commit",
    body: SkillSourceUpdateBody,
    responses: resp(SkillInstallRoutes.update),
  },
  {
    method: 'POST',
    path: '/skills/:name/update',
    summary: "Move an installed skill to its ref's newest commit; reports what changed in its SKILL.md",
    params: { name: SkillPathName },
    body: SkillUpdateBody,
    responses: resp(SkillInstallRoutes.update),
  },
  {
    method: 'DELETE',
    path: '/skills/:name',
    summary: "Delete the tenant's own skill (installed or created; ?confirm=true)",
    params: { name: SkillPathName },
    query: SkillDeleteQuery,
    responses: resp(SkillInstallRoutes.delete),
  },
  {
    method: 'GET',
    path: '/skills/:name',
    summary: 'A skill body (level 2)',
    params: { name: SkillPathName },
    responses: resp(SkillRoutes.get),
  },
  {
    method: 'GET',
    path: '/skills/:name/resources',
    summary: 'Files of a skill folder (level 3)',
    params: { name: SkillPathName },
    responses: resp(SkillRoutes.resources),
  },
  {
    method: 'GET',
    path: '/skills/:name/resources/*',
    summary: 'One file of a skill folder',
    params: { name: SkillPathName, '*': SkillResourcePath },
    responses: resp(SkillRoutes.resource),
  },
  {
    method: 'POST',
    path: '/skills/:id/execute',
    summary: 'Run an executable skill (alias of /executable-skills/{id}/execute)',
    params: execId,
    body: z.unknown(),
    responses: resp(SkillRunnerRoutes.execute),
  },
  {
    method: 'GET',
    path: '/skills/:id/executions',
    summary: "The tenant's executions of a skill (alias)",
    params: execId,
    query: SkillExecutionsQuery,
    responses: resp(SkillRunnerRoutes.executions),
  },
  {
    method: 'GET',
    path: '/executable-skills',
    summary: 'Executable skills with their status',
    query: ExecutableSkillListQuery,
    responses: resp(ExecutableSkillRoutes.list),
  },
  {
    method: 'POST',
    path: '/executable-skills',
    summary: 'Create an executable skill',
    body: ExecutableSkillCreateBody,
    responses: resp(ExecutableSkillRoutes.create, 201),
  },
  {
    method: 'POST',
    path: '/executable-skills/reload',
    summary: 'Re-read executable skill folders',
    responses: resp(ExecutableSkillRoutes.reload),
  },
  {
    method: 'GET',
    path: '/executable-skills/:id',
    summary: 'One executable skill',
    params: execId,
    responses: resp(ExecutableSkillRoutes.get),
  },
  {
    method: 'PATCH',
    path: '/executable-skills/:id',
    summary: 'Change an executable skill',
    params: execId,
    body: ExecutableSkillPatch,
    responses: resp(ExecutableSkillRoutes.update),
  },
  {
    method: 'DELETE',
    path: '/executable-skills/:id',
    summary: 'Delete an executable skill (?confirm=true)',
    params: execId,
    query: ExecDeleteQuery,
    responses: resp(ExecutableSkillRoutes.delete),
  },
  {
    method: 'POST',
    path: '/executable-skills/:id/consent',
    summary: 'Let this version (digest) of a skill installed from git run',
    params: execId,
    body: ExecutableSkillConsentBody,
    responses: resp(ExecutableSkillRoutes.consent),
  },
  {
    method: 'POST',
    path: '/executable-skills/:id/execute',
    summary: 'Run an executable skill in the sandbox with these arguments',
    params: execId,
    body: z.unknown(),
    responses: resp(SkillRunnerRoutes.execute),
  },
  {
    method: 'GET',
    path: '/executable-skills/:id/executions',
    summary: "The tenant's executions of a skill, newest first",
    params: execId,
    query: SkillExecutionsQuery,
    responses: resp(SkillRunnerRoutes.executions),
  },

  {
    method: 'POST',
    path: '/channels/telegram/:tenant/webhook',
    summary:
      "Telegram's webhook (registered by the channels service): authenticated by " +
      'X-Telegram-Bot-Api-Secret-Token, not an API key; 200 once the update is stored',
    params: { tenant: TenantId },
    body: TelegramUpdate,
    responses: resp(ChannelRoutes.telegramWebhook),
    open: true,
  },

  {
    method: 'POST',
    path: '/mcp',
    summary: 'MCP over Streamable HTTP (stateless JSON-RPC)',
    body: z.unknown(),
    responses: { 200: { mediaType: 'application/json', description: 'a JSON-RPC response (or text/event-stream)' } },
  },
  ...(['GET', 'PUT', 'PATCH', 'DELETE'] as const).map((method) => ({
    method,
    path: '/mcp',
    summary: 'MCP is stateless: no server-initiated stream or session to end (405, a JSON-RPC error)',
    responses: { 405: mcpRefusal },
  })),
];
