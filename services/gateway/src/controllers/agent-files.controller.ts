import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put } from '@nestjs/common';
import {
  AgentFileRestoreBody,
  AgentFileWriteBody,
  AgentName,
  EditableAgentFile,
  AgentFileRoutes,
  AgentRoutes,
  agentFileName,
  ErrorCode,
  type AgentFileKind,
  type Scope,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { AgentNotScoped } from '../http/agent-scope.js';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

const KINDS = Object.keys(agentFileName) as AgentFileKind[];

/** `user` / `soul` / `memory`, or the file names USER.md / SOUL.md / MEMORY.md, in any case. */
export function fileKind(raw: string): AgentFileKind {
  const name = raw.toLowerCase().replace(/\.md$/, '');
  const kind = KINDS.find((k) => k === name);
  if (!kind)
    throw new AlfredError(
      ErrorCode.NotFound,
      `no agent file ${raw}: use user, soul or memory (or USER.md, SOUL.md, MEMORY.md)`,
      { file: raw },
    );
  return kind;
}

/**
 * The versioned agent files. The `{agent}` in the path names the agent and overrides X-Alfred-Agent
 * (the tenant still comes from the API key).
 */
@AgentNotScoped()
@Controller('agents/:agent/files/:file')
export class AgentFilesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  async get(@CallerParam() c: Caller, @Param('agent') agent: string, @Param('file') file: string) {
    const kind = fileKind(file);
    return this.bus.request(
      AgentFileRoutes.get,
      { scope: await this.scope(c, agent), file: kind },
      { context: c.context },
    );
  }

  @Get('history')
  async history(@CallerParam() c: Caller, @Param('agent') agent: string, @Param('file') file: string) {
    const kind = fileKind(file);
    return this.bus.request(
      AgentFileRoutes.history,
      { scope: await this.scope(c, agent), file: kind },
      { context: c.context },
    );
  }

  @Get('history/:version')
  async version(
    @CallerParam() c: Caller,
    @Param('agent') agent: string,
    @Param('file') file: string,
    @Param('version') raw: string,
  ) {
    const kind = fileKind(file);
    const version = Number(raw);
    if (!/^[1-9]\d{0,8}$/.test(raw))
      throw new AlfredError(ErrorCode.NotFound, `${agentFileName[kind]} has no version ${raw}`, {
        file: kind,
        version: raw,
      });
    return this.bus.request(
      AgentFileRoutes.version,
      { scope: await this.scope(c, agent), file: kind, version },
      { context: c.context },
    );
  }

  @Post('restore')
  @HttpCode(200)
  async restore(
    @CallerParam() c: Caller,
    @Param('agent') agent: string,
    @Param('file') file: string,
    @Body() body: unknown,
  ) {
    const { version, expected_version } = parseInput(AgentFileRestoreBody, body);
    const kind = fileKind(file);
    const scope = await this.scope(c, agent);
    return this.bus.request(
      AgentFileRoutes.restore,
      { scope, file: kind, version, expected_version, writer: c.writer },
      { context: c.context },
    );
  }

  /** A person's edit of USER.md or SOUL.md, saved only over the version it started from. */
  @Put()
  async write(
    @CallerParam() c: Caller,
    @Param('agent') agent: string,
    @Param('file') file: string,
    @Body() body: unknown,
  ) {
    const kind = parseInput(EditableAgentFile, fileKind(file));
    const request = parseInput(AgentFileWriteBody, body);
    const scope = await this.scope(c, agent);
    return this.bus.request(
      AgentFileRoutes.edit,
      { scope, file: kind, request, writer: c.writer },
      { context: c.context },
    );
  }

  /** The path's agent, which must exist (its files go with it). */
  private async scope(c: Caller, agent: string): Promise<Scope> {
    const parsed = AgentName.safeParse(agent);
    if (!parsed.success)
      throw new AlfredError(ErrorCode.BadRequest, `invalid agent name in the path: ${parsed.error.issues[0]?.message}`);
    const scope = { ...c.scope, agent: parsed.data };
    await this.bus.request(AgentRoutes.get, { scope }, { context: c.context });
    return scope;
  }
}
