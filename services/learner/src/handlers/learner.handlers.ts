import { Inject, Injectable } from '@nestjs/common';
import { LearnerRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { LearnerService } from '../learner.service.js';

/** Learning on the bus. */
@Injectable()
export class LearnerHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly learner: LearnerService,
  ) {
    super(bus);
  }

  protected register(): void {
    this.handle(LearnerRoutes.learn, (p, ctx) => this.learner.learn(p.scope, p.request, ctx));
  }
}
