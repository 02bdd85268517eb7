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
import { BUS, type Bus } from '#bus';
import { CallerParam, scopedWriter, writtenFilter, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/** A name in the path; the registry answers an unknown one with NOT_FOUND and close valid names. */
const skillName = (raw: string): string => parseInput(SkillPathName, raw);

/**
 * Skills: the level-1 index (JSON or rendered for a prompt), level-2 bodies, level-3 resources,
 * search, reload and create. `skills/search` is declared before `skills/:name` so it is never taken for a name.
 */
@Controller('skills')
export class SkillsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  async index(@CallerParam() c: Caller, @Query() query: unknown) {
    const { format, budget, installed_from, ...filters } = parseInput(SkillIndexQuery, query);
    const request = { tenant: c.scope.tenant, ...(budget === undefined ? {} : { budget }), ...writtenFilter(filters), ...(installed_from ? { installed_from } : {}) };
    const { rendered, ...index } = await this.bus.request(SkillRoutes.index, request, { context: c.context });
    if (format === 'json') return index;
    return { format, ...rendered[format], budget: index.budget };
  }

  @Get('search')
  search(@CallerParam() c: Caller, @Query() query: unknown) {
    return this.bus.request(SkillRoutes.search, { tenant: c.scope.tenant, query: parseInput(SkillSearchQuery, query) }, { context: c.context });
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
    return this.bus.request(SkillRoutes.create, { tenant: c.scope.tenant, skill, writer }, { context: c.context, timeoutMs: 60_000 });
  }

  /** Installs the skills of a git repository (or a folder of it) into the caller tenant's catalog, pinned to a commit. */
  @Post('install')
  @HttpCode(200)
  install(@CallerParam() c: Caller, @Body() body: unknown) {
    const parsed = parseInput(SkillInstallBody, body);
    return this.bus.request(SkillInstallRoutes.install, { tenant: c.scope.tenant, body: parsed, writer: scopedWriter(c) }, { context: c.context });
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
    return this.bus.request(SkillInstallRoutes.delete, { tenant: c.scope.tenant, name: skillName(name), confirm: confirm === 'true' }, { context: c.context });
  }

  @Get(':name')
  get(@CallerParam() c: Caller, @Param('name') name: string) {
    return this.bus.request(SkillRoutes.get, { tenant: c.scope.tenant, name: skillName(name) }, { context: c.context });
  }

  /** One outcome of a use of the skill: it moves the skill in search and in the level-1 index under a budget. */
  @Post(':name/feedback')
  @HttpCode(200)
  feedback(@CallerParam() c: Caller, @Param('name') name: string, @Body() body: unknown) {
    const feedback = parseInput(SkillFeedbackBody, body);
    return this.bus.request(SkillRoutes.feedback, { tenant: c.scope.tenant, name: skillName(name), feedback }, { context: c.context });
  }

  @Get(':name/resources')
  resources(@CallerParam() c: Caller, @Param('name') name: string) {
    return this.bus.request(SkillRoutes.resources, { tenant: c.scope.tenant, name: skillName(name) }, { context: c.context });
  }

  /** The rest of the path, URL-decoded, may hold slashes; the registry checks containment before reading. */
  @Get(':name/resources/*')
  resource(@CallerParam() c: Caller, @Param('name') name: string, @Param('*') path: string) {
    const rel = parseInput(SkillResourcePath, path);
    return this.bus.request(SkillRoutes.resource, { tenant: c.scope.tenant, name: skillName(name), path: rel }, { context: c.context });
  }
}
