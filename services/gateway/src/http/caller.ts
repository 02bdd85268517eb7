import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import {
  AgentName,
  ErrorCode,
  hasWriterFilter,
  SkillName,
  SourceRef,
  type AgentPolicy,
  type Scope,
  type ScopedWriter,
  type Writer,
  type WriterQuery,
} from '#contracts';
import type { MessageContext } from '#bus';
import { AlfredError } from '#errors';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { CredentialScope } from './scoped-credential.js';

export const AGENT_HEADER = 'x-alfred-agent';
export const DEFAULT_AGENT = 'alfred';

/** Set on each request by the auth hook before routing. */
export interface AlfredRequestState {
  tenant: string;
  correlationId: string;
  /** Set by the idempotency interceptor when the request carries an Idempotency-Key (hashed with tenant and path). */
  idempotencyKey?: string;
  /** Set when a scoped credential (the agent's bash) authenticated the request: its agent and session are fixed. */
  scoped?: CredentialScope;
  /** The API key's name (a fingerprint) when a configured key authenticated the request. */
  keyName?: string;
  /** The policy of the agent the request names, as the agent guard read it (absent until read). */
  policy?: AgentPolicy;
}

declare module 'fastify' {
  interface FastifyRequest {
    alfred: AlfredRequestState;
  }
}

/** Who is calling and for which agent, plus the correlation id to carry across the bus. */
export interface Caller {
  readonly scope: Scope;
  readonly context: MessageContext;
  /**
   * True when the request named its agent (X-Alfred-Agent); otherwise the agent is the default or implied by a session.
   */
  readonly agentNamed: boolean;
  /** The agent's policy once read for this request (see callerPolicy); absent means not read yet, never "anything". */
  readonly policy?: AgentPolicy;
  /** Who writes, for the provenance of what this request stores (see #contracts' Writer). */
  readonly writer: Writer;
}

/** The caller's writer with its agent: the provenance of a skill it creates (skills belong to the tenant). */
export function scopedWriter(c: Caller, via?: string): ScopedWriter {
  return { ...c.writer, agent: c.scope.agent, ...(via ? { via } : {}) };
}

export const SOURCE_HEADER = 'X-Alfred-Source';
/** The skill whose instructions made the request (the bundled skills' curl lines send it). */
export const SKILL_HEADER = 'X-Alfred-Skill';

/**
 * The writer of a request: session and turn of a scoped credential, else the key's name; the client's
 * X-Alfred-Source. `via` is the skill the request names (`skill:<name>`), else `tool:bash` for a turn's scoped
 * credential (only the agent's bash holds one), else plain `rest`.
 */
export function writerOf(req: FastifyRequest): Writer {
  const source = header(req, SOURCE_HEADER, SourceRef, 'a URL or document name of at most 2000 characters');
  const skill = header(
    req,
    SKILL_HEADER,
    SkillName,
    'the name of the skill making the request (1-64 lowercase letters, digits and single hyphens)',
  );
  const scoped = req.alfred.scoped;
  const who = scoped ? { session: scoped.session, turn: scoped.turn } : { key: req.alfred.keyName ?? 'open-loopback' };
  const via = skill !== undefined ? `skill:${skill}` : scoped ? 'tool:bash' : 'rest';
  return { ...who, via, ...(source !== undefined ? { source } : {}) };
}

/** An optional header's value checked against its schema: absent or empty is undefined, invalid is a 400 naming it. */
function header(req: FastifyRequest, name: string, schema: z.ZodString, expected: string): string | undefined {
  const raw = req.headers[name.toLowerCase()];
  const given = Array.isArray(raw) ? raw[0] : raw;
  if (given === undefined || given === '') return undefined;
  const parsed = schema.safeParse(given);
  if (parsed.success) return parsed.data;
  throw new AlfredError(ErrorCode.BadRequest, `invalid ${name} header: ${expected}`, { header: name });
}

/** `{ written }` for a skills list request when the query names any writer filter, else nothing. */
export function writtenFilter(q: Partial<WriterQuery>): { written?: WriterQuery } {
  if (!hasWriterFilter(q)) return {};
  const { written_session, written_via, written_key, written_source } = q;
  return { written: { written_session, written_via, written_key, written_source } };
}

/** The agent X-Alfred-Agent names, undefined when the header is absent or empty; a malformed name is a 400. */
export function namedAgent(req: FastifyRequest): string | undefined {
  const raw = req.headers[AGENT_HEADER];
  const asked = Array.isArray(raw) ? raw[0] : raw;
  const scoped = req.alfred.scoped;
  if (scoped && asked !== undefined && asked !== '' && asked !== scoped.agent) {
    throw new AlfredError(ErrorCode.Forbidden, `this credential acts only as agent ${scoped.agent}`, {
      header: 'X-Alfred-Agent',
    });
  }
  const agent = scoped?.agent ?? asked;
  if (agent === undefined || agent === '') return undefined;
  const parsed = AgentName.safeParse(agent);
  if (!parsed.success) {
    throw new AlfredError(ErrorCode.BadRequest, `invalid X-Alfred-Agent header: ${parsed.error.issues[0]?.message}`, {
      header: 'X-Alfred-Agent',
    });
  }
  return parsed.data;
}

export function callerOf(req: FastifyRequest): Caller {
  const named = namedAgent(req);
  return {
    scope: { tenant: req.alfred.tenant, agent: named ?? DEFAULT_AGENT },
    context: {
      correlationId: req.alfred.correlationId,
      ...(req.alfred.idempotencyKey ? { idempotencyKey: req.alfred.idempotencyKey } : {}),
    },
    agentNamed: named !== undefined,
    writer: writerOf(req),
    ...(req.alfred.policy ? { policy: req.alfred.policy } : {}),
  };
}

/** `@CallerParam() caller: Caller` in a controller method. */
export const CallerParam = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Caller => callerOf(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
