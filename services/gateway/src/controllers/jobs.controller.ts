import { Controller, Get, Inject, Param } from '@nestjs/common';
import { DistillerRoutes, JobId } from '#contracts';
import { BUS, type Bus } from '#bus';
import { AlfredError } from '#errors';
import { CallerParam, type Caller } from '../http/caller.js';

/** Status of async work, visible only to the tenant and agent that started it (others get 404). */
@Controller('jobs')
export class JobsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Get(':id')
  get(@CallerParam() c: Caller, @Param('id') id: string) {
    if (!JobId.safeParse(id).success) throw AlfredError.notFound('job', id);
    return this.bus.request(DistillerRoutes.job, { scope: c.scope, id }, { context: c.context });
  }
}
