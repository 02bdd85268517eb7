import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { AgentFileRestoreBody, AgentName, agentFileName, ErrorCode, LearnerRoutes, type AgentFileKind } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

const KINDS = Object.keys(agentFileName) as AgentFileKind[];

/** `user` / `soul` / `memory`, or the file names USER.md / SOUL.md / MEMORY.md, in any case. */
export function fileKind(raw: string): AgentFileKind {
  const name = raw.toLowerCase().replace(/\.md$/, '');
  const kind = KINDS.find((k) => k === name);
  if (!kind) throw new AlfredError(ErrorCode.NotFound, `no agent file ${raw}: use user, soul or memory (or USER.md, SOUL.md, MEMORY.md)`, { file: raw });
  return kind;
}

/**
 * The versioned agent files. The `{agent}` in the path names the agent and overrides X-Alfred-Agent
 * (the tenant still comes from the API key).
 */
@Controller('agents/:agent/files/:file')
export class AgentFilesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  get(@CallerParam() c: Caller, @Param('agent') agent: string, @Param('file') file: string) {
    return this.bus.request(LearnerRoutes.fileGet, { scope: this.scope(c, agent), file: fileKind(file) }, { context: c.context });
  }

  @Get('history')
  history(@CallerParam() c: Caller, @Param('agent') agent: string, @Param('file') file: string) {
    return this.bus.request(LearnerRoutes.fileHistory, { scope: this.scope(c, agent), file: fileKind(file) }, { context: c.context });
  }

  @Post('restore')
  @HttpCode(200)
  restore(@CallerParam() c: Caller, @Param('agent') agent: string, @Param('file') file: string, @Body() body: unknown) {
    const { version } = parseInput(AgentFileRestoreBody, body);
    return this.bus.request(LearnerRoutes.fileRestore, { scope: this.scope(c, agent), file: fileKind(file), version }, { context: c.context });
  }

  private scope(c: Caller, agent: string) {
    const parsed = AgentName.safeParse(agent);
    if (!parsed.success) throw new AlfredError(ErrorCode.BadRequest, `invalid agent name in the path: ${parsed.error.issues[0]?.message}`);
    return { ...c.scope, agent: parsed.data };
  }
}
