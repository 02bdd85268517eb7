import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import {
  AgentCreateBody,
  AgentDeleteQuery,
  AgentName,
  AgentPatchBody,
  AgentRoutes,
  DEFAULT_AGENT_NAME,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { AgentNotScoped } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { ScopedCredentials } from '../http/scoped-credential.js';
import { parseInput } from '../http/validation.js';

function agentName(raw: string): string {
  if (!AgentName.safeParse(raw).success) throw AlfredError.notFound('agent', raw);
  return raw;
}

/**
 * Named agents of the caller's tenant (the path names the agent, not X-Alfred-Agent). `alfred` always exists
 * and cannot be deleted; DELETE needs `?confirm=<name>` and removes everything the agent owned. The policy
 * (`skills`, `tools`: allow/deny name patterns) limits what the agent may load, activate and call.
 */
@AgentNotScoped()
@Controller('agents')
export class AgentsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(ScopedCredentials) private readonly credentials: ScopedCredentials,
  ) {}

  @Post()
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const agent = parseInput(AgentCreateBody, body ?? {});
    return this.bus.request(AgentRoutes.create, { tenant: c.scope.tenant, agent }, { context: c.context });
  }

  @Get()
  list(@CallerParam() c: Caller) {
    return this.bus.request(AgentRoutes.list, { tenant: c.scope.tenant }, { context: c.context });
  }

  @Get(':name')
  get(@CallerParam() c: Caller, @Param('name') name: string) {
    return this.bus.request(
      AgentRoutes.get,
      { scope: { tenant: c.scope.tenant, agent: agentName(name) } },
      { context: c.context },
    );
  }

  @Patch(':name')
  patch(@CallerParam() c: Caller, @Param('name') name: string, @Body() body: unknown) {
    const patch = parseInput(AgentPatchBody, body ?? {});
    return this.bus.request(
      AgentRoutes.patch,
      { scope: { tenant: c.scope.tenant, agent: agentName(name) }, patch },
      { context: c.context },
    );
  }

  @Delete(':name')
  async delete(@CallerParam() c: Caller, @Param('name') name: string, @Query() query: unknown) {
    const { confirm } = parseInput(AgentDeleteQuery, query ?? {});
    const scope = { tenant: c.scope.tenant, agent: agentName(name) };
    // Its turns' bash credentials end first (on every gateway): nothing keeps acting as an agent being deleted.
    if (confirm === scope.agent && scope.agent !== DEFAULT_AGENT_NAME) {
      await this.credentials.revokeAgent(scope.tenant, scope.agent);
    }
    // Deleting walks every memory and session of the agent: allow it more than the default bus timeout.
    return this.bus.request(AgentRoutes.delete, { scope, confirm }, { context: c.context, timeoutMs: 120_000 });
  }
}
