import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { SessionAppendBody, SessionCreateBody, SessionId, SessionListQuery, SessionRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/** A session id from the path: a malformed one cannot exist, so it is a 404 like any unknown id. */
function sessionId(raw: string): string {
  if (!SessionId.safeParse(raw).success) throw AlfredError.notFound('session', raw);
  return raw;
}

/**
 * Sessions of the calling agent (X-Alfred-Agent; `agent` in the create body overrides it), served by
 * agent-runtime over the bus. Another agent's session is a 404, as an unknown one.
 */
@Controller('sessions')
export class SessionsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post()
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const { agent, metadata } = parseInput(SessionCreateBody, body ?? {});
    const scope = { ...c.scope, agent: agent ?? c.scope.agent };
    return this.bus.request(SessionRoutes.create, { scope, metadata }, { context: c.context });
  }

  @Get()
  list(@CallerParam() c: Caller, @Query() query: unknown) {
    const { limit, offset } = parseInput(SessionListQuery, query);
    return this.bus.request(SessionRoutes.list, { scope: c.scope, limit, offset }, { context: c.context });
  }

  @Get(':id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(SessionRoutes.get, { scope: c.scope, id: sessionId(id) }, { context: c.context });
  }

  @Post(':id/messages')
  @HttpCode(200)
  append(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const { messages } = parseInput(SessionAppendBody, body);
    return this.bus.request(SessionRoutes.append, { scope: c.scope, id: sessionId(id), messages }, { context: c.context });
  }

  @Delete(':id')
  delete(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(SessionRoutes.delete, { scope: c.scope, id: sessionId(id) }, { context: c.context });
  }
}
