import { Inject, Injectable } from '@nestjs/common';
import { DistillerRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { DistillJobs } from '../distill-jobs.js';

/** Distillation on the bus: submit (and wait briefly), job status. */
@Injectable()
export class DistillerHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly jobs: DistillJobs,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(DistillerRoutes.distill, (p, ctx) => this.jobs.submit(p.scope, p.request, ctx));
    this.handle(DistillerRoutes.job, (p) => this.jobs.view(p.scope, p.id));
  }
}
