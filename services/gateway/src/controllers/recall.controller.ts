import { Controller, Get, Inject, Query } from '@nestjs/common';
import { RecallQuery, RecallRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { CallerParam, type Caller } from '../http/caller.js';
import { parseInput } from '../http/validation.js';

/** One ranked retrieval across memories, remediations and skills, filled into a token budget. */
@Controller('recall')
export class RecallController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get()
  recall(@CallerParam() c: Caller, @Query() query: unknown) {
    return this.bus.request(
      RecallRoutes.recall,
      { scope: c.scope, query: parseInput(RecallQuery, query) },
      { context: c.context },
    );
  }
}
