import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ExecutableSkillConsentBody,
  ExecutableSkillCreateBody,
  ExecutableSkillListQuery,
  ExecutableSkillPatch,
  ExecutableSkillRoutes,
  SKILL_EXECUTE_BUS_TIMEOUT_MS,
  SkillExecutionsQuery,
  SkillId,
  SkillRunnerRoutes,
  skillToolName,
} from '#contracts';
import { enforcePolicy } from '#agent-tools';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { z } from 'zod';
import { AGENT_DIRECTORY, callerPolicy, type AgentDirectory } from '../http/agent-directory.js';
import { CallerParam, scopedWriter, writtenFilter, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

const DeleteQuery = z.strictObject({ confirm: z.enum(['true', 'false']).default('false') });

/**
 * Executable skills (skill.json + execute.ts): management on the skill-registry, execution on the
 * skill-runner queue group. `/skills/{name}/execute` and `/skills/{name}/executions` are aliases.
 */
@Controller()
export class ExecutableSkillsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  @Get('executable-skills')
  list(@CallerParam() c: Caller, @Query() query: unknown) {
    const written = writtenFilter(parseInput(ExecutableSkillListQuery, query));
    return this.bus.request(ExecutableSkillRoutes.list, { tenant: c.scope.tenant, ...written }, { context: c.context });
  }

  @Post('executable-skills')
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const writer = scopedWriter(c);
    return this.bus.request(
      ExecutableSkillRoutes.create,
      { scope: c.scope, body: parseInput(ExecutableSkillCreateBody, body), writer },
      { context: c.context },
    );
  }

  @Post('executable-skills/reload')
  @HttpCode(200)
  reload(@CallerParam() c: Caller) {
    return this.bus.request(ExecutableSkillRoutes.reload, { tenant: c.scope.tenant }, { context: c.context });
  }

  @Get('executable-skills/:id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(
      ExecutableSkillRoutes.get,
      { tenant: c.scope.tenant, id: skillId(id) },
      { context: c.context },
    );
  }

  @Patch('executable-skills/:id')
  update(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const patch = parseInput(ExecutableSkillPatch, body);
    const writer = scopedWriter(c);
    return this.bus.request(
      ExecutableSkillRoutes.update,
      { tenant: c.scope.tenant, id: skillId(id), patch, writer },
      { context: c.context },
    );
  }

  /** Without `?confirm=true`: 409 CONFLICT whose details show what would be deleted; nothing changes. */
  @Delete('executable-skills/:id')
  remove(@CallerParam() c: Caller, @Param('id') id: string, @Query() query: unknown) {
    const { confirm } = parseInput(DeleteQuery, query);
    return this.bus.request(
      ExecutableSkillRoutes.delete,
      { tenant: c.scope.tenant, id: skillId(id), confirm: confirm === 'true' },
      { context: c.context },
    );
  }

  /** The tenant lets this version (digest) of a skill installed from git run. */
  @Post('executable-skills/:id/consent')
  @HttpCode(200)
  consent(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const { digest } = parseInput(ExecutableSkillConsentBody, body);
    return this.bus.request(
      ExecutableSkillRoutes.consent,
      { tenant: c.scope.tenant, id: skillId(id), digest },
      { context: c.context },
    );
  }

  @Post(['executable-skills/:id/execute', 'skills/:id/execute'])
  @HttpCode(200)
  async execute(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const caller = { ...c.scope, correlationId: c.context.correlationId };
    // Run as the agent, an executable skill is the agent's `skill_<id>` tool: its policy decides here as in a turn.
    enforcePolicy(await callerPolicy(this.agents, c), c.scope.agent, 'tool', skillToolName(skillId(id)));
    return this.bus.request(
      SkillRunnerRoutes.execute,
      { id: skillId(id), args: body ?? {}, caller },
      { context: c.context, timeoutMs: SKILL_EXECUTE_BUS_TIMEOUT_MS },
    );
  }

  @Get(['executable-skills/:id/executions', 'skills/:id/executions'])
  executions(@CallerParam() c: Caller, @Param('id') id: string, @Query() query: unknown) {
    const parsed = parseInput(SkillExecutionsQuery, query);
    return this.bus.request(
      SkillRunnerRoutes.executions,
      { scope: c.scope, id: skillId(id), query: parsed },
      { context: c.context },
    );
  }
}

/** An id that cannot name a skill is simply not found. */
function skillId(id: string): string {
  if (!SkillId.safeParse(id).success) throw AlfredError.notFound('executable skill', id);
  return id;
}
