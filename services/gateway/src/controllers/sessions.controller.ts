import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  AgentRoutes,
  ErrorCode,
  SessionAppendBody,
  SessionCreateBody,
  SessionId,
  SessionListQuery,
  SessionRoutes,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { sessionCaller } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { ScopedCredentials } from '../http/scoped-credential.js';
import { parseInput } from '../http/validation.js';

/** A session id from the path: a malformed one cannot exist, so it is a 404 like any unknown id. */
function sessionId(raw: string): string {
  if (!SessionId.safeParse(raw).success) throw AlfredError.notFound('session', raw);
  return raw;
}

/**
 * Sessions of an agent, served by agent-runtime over the bus. Created for X-Alfred-Agent (or `agent` in the body)
 * when that agent exists; listed per agent (`?agent=`); a session implies its agent, so reading or changing it
 * needs no header (a header naming another agent is a 404 saying whose session it is).
 */
@Controller('sessions')
export class SessionsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(ScopedCredentials) private readonly credentials: ScopedCredentials,
  ) {}

  @Post()
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const { agent, metadata } = parseInput(SessionCreateBody, body ?? {});
    const scope = { ...c.scope, agent: agent ?? c.scope.agent };
    return this.bus.request(SessionRoutes.create, { scope, metadata }, { context: c.context });
  }

  @Get()
  async list(@CallerParam() c: Caller, @Query() query: unknown) {
    const { agent, limit, offset } = parseInput(SessionListQuery, query);
    if (agent && c.agentNamed && agent !== c.scope.agent) {
      throw new AlfredError(
        ErrorCode.BadRequest,
        `?agent=${agent} and X-Alfred-Agent: ${c.scope.agent} name different agents`,
      );
    }
    const scope = { ...c.scope, agent: agent ?? c.scope.agent };
    if (agent) await this.bus.request(AgentRoutes.get, { scope }, { context: c.context });
    return this.bus.request(SessionRoutes.list, { scope, limit, offset }, { context: c.context });
  }

  @Get(':id')
  async get(@CallerParam() c: Caller, @Param('id') id: string) {
    const s = await sessionCaller(this.bus, c, sessionId(id));
    return this.bus.request(SessionRoutes.get, { scope: s.scope, id }, { context: c.context });
  }

  @Post(':id/messages')
  @HttpCode(200)
  async append(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const { messages } = parseInput(SessionAppendBody, body);
    const s = await sessionCaller(this.bus, c, sessionId(id));
    return this.bus.request(SessionRoutes.append, { scope: s.scope, id, messages }, { context: c.context });
  }

  @Delete(':id')
  async delete(@CallerParam() c: Caller, @Param('id') id: string) {
    const s = await sessionCaller(this.bus, c, sessionId(id));
    // The bash credentials of its turns end first, on every gateway: none outlives the session it acts in.
    await this.credentials.revokeSession(s.scope.tenant, id);
    return this.bus.request(SessionRoutes.delete, { scope: s.scope, id }, { context: c.context });
  }
}
