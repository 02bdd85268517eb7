import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  FeedbackBody,
  RemediationId,
  RemediationRecordBody,
  RemediationRoutes,
  RemediationSearchQuery,
} from '#contracts';
import { BUS, type Bus } from '#bus';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/**
 * Error fixes per agent: record, search by a new error's text, read one, rate one. `search` is declared before `:id`.
 */
@Controller('remediations')
export class RemediationsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Post()
  @HttpCode(201)
  record(@CallerParam() c: Caller, @Body() body: unknown) {
    const remediation = parseInput(RemediationRecordBody, body);
    return this.bus.request(
      RemediationRoutes.record,
      { scope: c.scope, remediation, writer: c.writer },
      { context: c.context },
    );
  }

  @Get('search')
  search(@CallerParam() c: Caller, @Query() query: unknown) {
    return this.bus.request(
      RemediationRoutes.search,
      { scope: c.scope, query: parseInput(RemediationSearchQuery, query) },
      { context: c.context },
    );
  }

  @Get(':id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    return this.bus.request(
      RemediationRoutes.get,
      { scope: c.scope, id: parseInput(RemediationId, id) },
      { context: c.context },
    );
  }

  @Post(':id/feedback')
  @HttpCode(200)
  feedback(@CallerParam() c: Caller, @Param('id') id: string, @Body() body: unknown) {
    const feedback = parseInput(FeedbackBody, body);
    return this.bus.request(
      RemediationRoutes.feedback,
      { scope: c.scope, id: parseInput(RemediationId, id), feedback },
      { context: c.context },
    );
  }
}
