import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { AgentName, ErrorCode, type Scope } from '#contracts';
import type { MessageContext } from '#bus';
import { AlfredError } from '#errors';
import type { FastifyRequest } from 'fastify';
import type { CredentialScope } from './scoped-credential.js';

export const AGENT_HEADER = 'x-alfred-agent';
export const DEFAULT_AGENT = 'alfred';

/** Set on each request by the auth hook before routing. */
export interface AlfredRequestState {
  tenant: string;
  correlationId: string;
  /** Set when a scoped credential (the agent's bash) authenticated the request: its agent and session are fixed. */
  scoped?: CredentialScope;
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
}

export function callerOf(req: FastifyRequest): Caller {
  const raw = req.headers[AGENT_HEADER];
  const scoped = req.alfred.scoped;
  const asked = raw === undefined || raw === '' ? undefined : Array.isArray(raw) ? raw[0] : raw;
  if (scoped && asked !== undefined && asked !== scoped.agent) {
    throw new AlfredError(ErrorCode.Forbidden, `this credential acts only as agent ${scoped.agent}`, { header: 'X-Alfred-Agent' });
  }
  const agent = scoped?.agent ?? asked ?? DEFAULT_AGENT;
  const parsed = AgentName.safeParse(agent);
  if (!parsed.success) {
    throw new AlfredError(ErrorCode.BadRequest, `invalid X-Alfred-Agent header: ${parsed.error.issues[0]?.message}`, {
      header: 'X-Alfred-Agent',
    });
  }
  return { scope: { tenant: req.alfred.tenant, agent: parsed.data }, context: { correlationId: req.alfred.correlationId } };
}

/** `@CallerParam() caller: Caller` in a controller method. */
export const CallerParam = createParamDecorator((_data: unknown, ctx: ExecutionContext): Caller =>
  callerOf(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
