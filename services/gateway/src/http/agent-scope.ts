import { SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ErrorCode, SessionRoutes } from '#contracts';
import type { Bus } from '#bus';
import { AlfredError, isAlfredError } from '#errors';
import type { FastifyRequest } from 'fastify';
import type { AgentDirectory } from './agent-directory.js';
import { DEFAULT_AGENT, namedAgent, type Caller } from './caller.js';

const NOT_SCOPED = 'alfred:agent-not-scoped';

/**
 * Marks a controller whose routes do not act for the X-Alfred-Agent agent (system routes, or the agent named in the
 * path).
 */
export const AgentNotScoped = () => SetMetadata(NOT_SCOPED, true);

/**
 * Everything an agent owns exists only for an existing agent: a request naming one in X-Alfred-Agent (or through a
 * scoped credential) that does not exist is a 404 saying how to create it, before any handler runs (`alfred` always
 * exists). The agent's policy read on the way is kept for the routes that enforce it.
 */
export class AgentExistsGuard implements CanActivate {
  constructor(private readonly directory: AgentDirectory) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (Reflect.getMetadata(NOT_SCOPED, ctx.getClass())) return true;
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const agent = namedAgent(req);
    if (agent === undefined || agent === DEFAULT_AGENT) return true;
    const scope = { tenant: req.alfred.tenant, agent };
    req.alfred.policy = await this.directory.policyOf(scope, { correlationId: req.alfred.correlationId });
    return true;
  }
}

/**
 * The caller as it acts on one session: a session implies its agent, so without X-Alfred-Agent the session's
 * own agent is used; a header naming another agent is a 404 that says whose session it is.
 */
export async function sessionCaller(bus: Bus, c: Caller, sessionId: string): Promise<Caller> {
  let owner: string;
  try {
    owner = (await bus.request(SessionRoutes.locate, { tenant: c.scope.tenant, id: sessionId }, { context: c.context }))
      .agent;
  } catch (err) {
    if (isAlfredError(err) && err.code === ErrorCode.NotFound) throw AlfredError.notFound('session', sessionId);
    throw err;
  }
  if (!c.agentNamed) return { ...c, scope: { ...c.scope, agent: owner } };
  if (owner !== c.scope.agent) {
    throw new AlfredError(
      ErrorCode.NotFound,
      `session ${sessionId} belongs to agent ${owner}, not ${c.scope.agent}: send X-Alfred-Agent: ${owner}, ` +
        `or leave the header out (a session implies its agent)`,
      { resource: 'session', id: sessionId, agent: owner },
    );
  }
  return c;
}
