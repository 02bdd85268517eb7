import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  SkillCreateBody,
  SkillDeleteQuery,
  SkillFeedbackBody,
  SkillIndexQuery,
  SkillInstallBody,
  SkillInstallRoutes,
  SkillPathName,
  SkillResourcePath,
  SkillRoutes,
  SkillSearchQuery,
  SkillSourceUpdateBody,
  SkillUpdateBody,
} from '#contracts';
import { allows, enforcePolicy } from '#agent-tools';
import { BUS, type Bus } from '#bus';
import { AGENT_DIRECTORY, callerPolicy, type AgentDirectory } from '../http/agent-directory.js';
import { CallerParam, scopedWriter, writtenFilter, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/** A name in the path; the registry answers an unknown one with NOT_FOUND and close valid names. */
const skillName = (raw: string): string => parseInput(SkillPathName, raw);

/**
 * Skills: the level-1 index (JSON or rendered for a prompt), level-2 bodies, level-3 resources,
 * search, reload and create. `skills/search` is declared before `skills/:name` so it is never taken for a name.
 * As every path that acts as an agent, they hold to its policy: a skill it denies is left out of the index and search,
 * and reading it, its files or reporting on it is FORBIDDEN.
 */
@Controller('skills')
export class SkillsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(AGENT_DIRECTORY) private readonly agents: AgentDirectory,
  ) {}

  @Get()
  async index(@CallerParam() c: Caller, @Query() query: unknown) {
    const { format, budget, installed_from, ...filters } = parseInput(SkillIndexQuery, query);
    const only = (await callerPolicy(this.agents, c)).skills;
    const sized = budget === undefined ? {} : { budget };
    const request = {
      tenant: c.scope.tenant,
      only,
      ...sized,
      ...writtenFilter(filters),
      ...(installed_from ? { installed_from } : {}),
    };
    const { rendered, ...index } = await this.bus.request(SkillRoutes.index, request, { context: c.context });
    if (format === 'json') return index;
    return { format, ...rendered[format], budget: index.budget };
  }

  @Get('search')
  async search(@CallerParam() c: Caller, @Query() query: unknown) {
    const parsed = parseInput(SkillSearchQuery, query);
    const policy = await callerPolicy(this.agents, c);
    const found = await this.bus.request(SkillRoutes.search, { tenant: c.scope.tenant, query: parsed }, this.opts(c));
    const results = found.results.filter((r) => allows(policy, 'skill', r.name));
    return { ...found, results, total: found.total - (found.results.length - results.length) };
  }

  @Post('reload')
  @HttpCode(200)
  reload(@CallerParam() c: Caller) {
    return this.bus.request(SkillRoutes.reload, { tenant: c.scope.tenant }, { context: c.context, timeoutMs: 60_000 });
  }

  @Post()
  @HttpCode(201)
  create(@CallerParam() c: Caller, @Body() body: unknown) {
    const skill = parseInput(SkillCreateBody, body);
    const writer = scopedWriter(c);
    return this.bus.request(
      SkillRoutes.create,
      { tenant: c.scope.tenant, skill, writer },
      { context: c.context, timeoutMs: 60_000 },
    );
  }

  /**
   * Installs the skills of a git repository (or a folder of it) into the caller tenant's catalog, pinned to a commit.
   */
  @Post('install')
  @HttpCode(200)
  install(@CallerParam() c: Caller, @Body() body: unknown) {
    const parsed = parseInput(SkillInstallBody, body);
    return this.bus.request(
      SkillInstallRoutes.install,
      { tenant: c.scope.tenant, body: parsed, writer: scopedWriter(c) },
      { context: c.context },
    );
  }

  /** Every skill installed from `source` (every installed source without one) moved to its ref's newest commit. */
  @Post('update')
  @HttpCode(200)
  updateSources(@CallerParam() c: Caller, @Body() body: unknown) {
    const { source, overwrite } = parseInput(SkillSourceUpdateBody, body ?? {});
    const request = { tenant: c.scope.tenant, overwrite, ...(source ? { source } : {}), writer: scopedWriter(c) };
    return this.bus.request(SkillInstallRoutes.update, request, { context: c.context });
  }

  @Post(':name/update')
  @HttpCode(200)
  update(@CallerParam() c: Caller, @Param('name') name: string, @Body() body: unknown) {
    parseInput(SkillUpdateBody, body ?? {});
    const request = { tenant: c.scope.tenant, name: skillName(name), overwrite: false, writer: scopedWriter(c) };
    return this.bus.request(SkillInstallRoutes.update, request, { context: c.context });
  }

  /** The tenant's own skill (installed or created); shared ones are read-only. */
  @Delete(':name')
  remove(@CallerParam() c: Caller, @Param('name') name: string, @Query() query: unknown) {
    const { confirm } = parseInput(SkillDeleteQuery, query);
    return this.bus.request(
      SkillInstallRoutes.delete,
      { tenant: c.scope.tenant, name: skillName(name), confirm: confirm === 'true' },
      { context: c.context },
    );
  }

  @Get(':name')
  async get(@CallerParam() c: Caller, @Param('name') name: string) {
    const request = { tenant: c.scope.tenant, name: await this.permitted(c, name) };
    return this.bus.request(SkillRoutes.get, request, this.opts(c));
  }

  /** One outcome of a use of the skill: it moves the skill in search and in the level-1 index under a budget. */
  @Post(':name/feedback')
  @HttpCode(200)
  async feedback(@CallerParam() c: Caller, @Param('name') name: string, @Body() body: unknown) {
    const feedback = parseInput(SkillFeedbackBody, body);
    const request = { tenant: c.scope.tenant, name: await this.permitted(c, name), feedback };
    return this.bus.request(SkillRoutes.feedback, request, this.opts(c));
  }

  @Get(':name/resources')
  async resources(@CallerParam() c: Caller, @Param('name') name: string) {
    const request = { tenant: c.scope.tenant, name: await this.permitted(c, name) };
    return this.bus.request(SkillRoutes.resources, request, this.opts(c));
  }

  /** The rest of the path, URL-decoded, may hold slashes; the registry checks containment before reading. */
  @Get(':name/resources/*')
  async resource(@CallerParam() c: Caller, @Param('name') name: string, @Param('*') path: string) {
    const rel = parseInput(SkillResourcePath, path);
    const request = { tenant: c.scope.tenant, name: await this.permitted(c, name), path: rel };
    return this.bus.request(SkillRoutes.resource, request, this.opts(c));
  }

  private opts(c: Caller) {
    return { context: c.context };
  }

  /** The skill's name, once the caller's agent may use it (FORBIDDEN otherwise). */
  private async permitted(c: Caller, raw: string): Promise<string> {
    const name = skillName(raw);
    enforcePolicy(await callerPolicy(this.agents, c), c.scope.agent, 'skill', name);
    return name;
  }
}
