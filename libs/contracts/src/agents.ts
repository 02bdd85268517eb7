import { z } from 'zod';
import { AgentName, IsoTimestamp, NamePatterns, Scope } from './common.js';
import { route, ServiceName, topic } from './route.js';
import { SessionId } from './sessions.js';

/** The agent that always exists and cannot be deleted. */
export const DEFAULT_AGENT_NAME = 'alfred';
export const PERSONA_MAX = 20_000;
export const TURN_MESSAGE_MAX = 200_000;

// ---------- named agents ----------

const ALL = { allow: ['*'], deny: [] };

/**
 * What an agent may use (seed 002/004): `skills` it may load or activate (SKILL.md names) and `tools` it may call
 * (executable-skill tools `skill_<id>` and the skill management tools). Default: everything.
 */
export const AgentPolicy = z.strictObject({
  skills: NamePatterns.default(ALL),
  tools: NamePatterns.default(ALL),
});
export type AgentPolicy = z.infer<typeof AgentPolicy>;
export const DEFAULT_AGENT_POLICY: AgentPolicy = { skills: ALL, tools: ALL };

/**
 * A named agent: its persona seed and policy; USER.md / SOUL.md / MEMORY.md, memories and sessions are keyed by its
 * name.
 */
export const AgentView = z.object({
  name: AgentName,
  persona: z.string(),
  policy: AgentPolicy,
  default: z.boolean(),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
});
export type AgentView = z.infer<typeof AgentView>;

/** POST /agents */
export const AgentCreateBody = z.strictObject({
  name: AgentName,
  persona: z.string().max(PERSONA_MAX).default(''),
  policy: AgentPolicy.optional(),
});
export type AgentCreateBody = z.infer<typeof AgentCreateBody>;

/** PATCH /agents/{name}: the persona and/or the policy (a given policy part replaces that part whole). */
export const AgentPatchBody = z
  .strictObject({ persona: z.string().max(PERSONA_MAX).optional(), policy: AgentPolicy.partial().optional() })
  .refine((b) => b.persona !== undefined || b.policy !== undefined, 'send persona and/or policy');
export type AgentPatchBody = z.infer<typeof AgentPatchBody>;

/** DELETE /agents/{name}?confirm={name}: the name repeated is the confirmation (nothing is deleted without it). */
export const AgentDeleteQuery = z.strictObject({ confirm: z.string().max(64).optional() });

export const AgentList = z.object({ agents: z.array(AgentView), total: z.number().int().min(0) });
export type AgentList = z.infer<typeof AgentList>;

export const AgentDeleted = z.object({
  name: AgentName,
  deleted: z.literal(true),
  memories_deleted: z.number().int().min(0),
  sessions_deleted: z.number().int().min(0),
  files_deleted: z.number().int().min(0),
  checkpoints_deleted: z.number().int().min(0).default(0),
  remediations_deleted: z.number().int().min(0).default(0),
});
export type AgentDeleted = z.infer<typeof AgentDeleted>;

// ---------- turns ----------

/** POST /sessions/{id}/turns body. `stream: false` (or Accept: application/json) answers with the final result. */
export const TurnBody = z.strictObject({
  message: z.string().trim().min(1, 'message cannot be empty').max(TURN_MESSAGE_MAX),
  stream: z.boolean().optional(),
});
export type TurnBody = z.infer<typeof TurnBody>;

/** POST /sessions/{id}/confirm body: the answer to a confirmation_request. */
export const ConfirmBody = z.strictObject({
  request_id: z.string().min(1).max(128),
  approve: z.boolean(),
});
export type ConfirmBody = z.infer<typeof ConfirmBody>;

export const TurnStatus = z.enum(['completed', 'failed', 'cancelled']);
export type TurnStatus = z.infer<typeof TurnStatus>;

export const TurnUsage = z.object({
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  cache_creation_input_tokens: z.number().int().min(0),
  cache_read_input_tokens: z.number().int().min(0),
  model_calls: z.number().int().min(0),
});
export type TurnUsage = z.infer<typeof TurnUsage>;

const ErrorInfo = z.object({ code: z.string(), message: z.string() });

/** One event of a running turn; the SSE `event:` name is its `type`. */
export const TurnEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('started'),
    turn_id: z.string(),
    session_id: SessionId,
    worker: z.string(),
    heartbeat_ms: z.number().int().min(1),
  }),
  z.object({ type: z.literal('text_delta'), text: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
  }),
  z.object({
    type: z.literal('tool_result'),
    id: z.string(),
    name: z.string(),
    content: z.string(),
    is_error: z.boolean(),
  }),
  z.object({
    type: z.literal('confirmation_request'),
    request_id: z.string(),
    action: z.enum(['activate_skill', 'tool_call']),
    skill: z.string(),
    prompt: z.string(),
  }),
  z.object({ type: z.literal('compacted'), tokens_before: z.number().int(), tokens_after: z.number().int() }),
  /** A model call failed before any output and is tried again after `delay_ms` (the stream is not stuck). */
  z.object({
    type: z.literal('retrying'),
    attempt: z.number().int().min(1),
    max_attempts: z.number().int().min(1),
    delay_ms: z.number().int().min(0),
    error: ErrorInfo,
  }),
  z.object({ type: z.literal('message'), text: z.string(), stop_reason: z.string().nullable() }),
  z.object({ type: z.literal('usage'), usage: TurnUsage }),
  z.object({ type: z.literal('error'), error: ErrorInfo }),
  z.object({ type: z.literal('heartbeat') }),
  z.object({ type: z.literal('done'), turn_id: z.string(), status: TurnStatus, rounds: z.number().int().min(0) }),
]);
export type TurnEvent = z.infer<typeof TurnEvent>;

/** The non-streaming answer of POST /sessions/{id}/turns. */
export const TurnResult = z.object({
  turn_id: z.string(),
  session_id: SessionId,
  status: TurnStatus,
  text: z.string(),
  stop_reason: z.string().nullable(),
  rounds: z.number().int().min(0),
  tool_calls: z.array(
    z.object({ id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), is_error: z.boolean() }),
  ),
  usage: TurnUsage,
  error: ErrorInfo.nullable(),
});
export type TurnResult = z.infer<typeof TurnResult>;

/** Signals to whichever worker runs a turn: every agent-runtime instance listens, the owner acts. */
export const TurnControl = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('cancel'), turn_id: z.string() }),
  z.object({ kind: z.literal('confirm'), turn_id: z.string(), request_id: z.string(), approve: z.boolean() }),
]);
export type TurnControl = z.infer<typeof TurnControl>;

export const TurnTopics = {
  /** Events of one turn; the turn id follows as one more token. */
  events: topic(ServiceName.AgentRuntime, 'turn-events', TurnEvent),
  control: topic(ServiceName.AgentRuntime, 'turn-control', TurnControl),
} as const;

export const TurnId = z.string().regex(/^turn-[0-9a-f]{32}$/, 'not a turn id');

const scoped = <T extends z.ZodRawShape>(shape: T) => z.object({ scope: Scope, ...shape });

export const AgentRoutes = {
  create: route(
    ServiceName.AgentRuntime,
    'agent-create',
    z.object({ tenant: Scope.shape.tenant, agent: AgentCreateBody }),
    AgentView,
  ),
  list: route(ServiceName.AgentRuntime, 'agent-list', z.object({ tenant: Scope.shape.tenant }), AgentList),
  /** The agent, or NOT_FOUND saying how to create it; `alfred` always exists. */
  get: route(ServiceName.AgentRuntime, 'agent-get', scoped({}), AgentView),
  patch: route(ServiceName.AgentRuntime, 'agent-patch', scoped({ patch: AgentPatchBody }), AgentView),
  delete: route(ServiceName.AgentRuntime, 'agent-delete', scoped({ confirm: z.string().optional() }), AgentDeleted),
} as const;

export const TurnRoutes = {
  /** Takes the session's lease and starts the turn; its events follow on TurnTopics.events keyed by turn_id. */
  start: route(
    ServiceName.AgentRuntime,
    'turn-start',
    scoped({
      session_id: SessionId,
      turn_id: TurnId,
      message: TurnBody.shape.message,
      /**
       * The scoped credential the gateway minted for this turn (its tenant, agent and session; it expires with the
       * turn): the agent's bash calls the API with it. Never the caller's key; never stored.
       */
      credential: z.string().min(1).max(1024).optional(),
    }),
    z.object({ turn_id: TurnId, worker: z.string() }),
  ),
  cancel: route(
    ServiceName.AgentRuntime,
    'turn-cancel',
    scoped({ session_id: SessionId }),
    z.object({ turn_id: z.string(), cancelled: z.literal(true), worker: z.string() }),
  ),
  confirm: route(
    ServiceName.AgentRuntime,
    'turn-confirm',
    scoped({ session_id: SessionId, request_id: z.string(), approve: z.boolean() }),
    z.object({ request_id: z.string(), approve: z.boolean(), turn_id: z.string(), worker: z.string() }),
  ),
} as const;

/**
 * Scoped credentials for turns that do not start at the gateway's HTTP API (a chat channel's): the gateway, which
 * alone holds the signing secret, mints one for the turn's tenant, agent, session and turn, and revokes it when the
 * turn is over (it expires after the TTL in any case). Services on the bus are trusted; agents never reach it.
 */
export const CredentialRoutes = {
  mint: route(
    ServiceName.Gateway,
    'credential-mint',
    scoped({ session_id: SessionId, turn_id: TurnId }),
    z.object({ credential: z.string() }),
  ),
  revoke: route(
    ServiceName.Gateway,
    'credential-revoke',
    scoped({ credential: z.string().min(1).max(1024) }),
    z.object({ revoked: z.boolean() }),
  ),
} as const;
