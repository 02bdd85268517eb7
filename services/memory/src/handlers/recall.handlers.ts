import { Inject, Injectable } from '@nestjs/common';
import { CheckpointRoutes, MemoryRoutes, RecallRoutes, RemediationRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { CheckpointService } from '../checkpoints/checkpoint.service.js';
import { MemoryFeedbackService } from '../feedback/memory-feedback.service.js';
import { RecallService } from '../recall/recall.service.js';
import { RemediationService } from '../remediations/remediation.service.js';

/** Checkpoints, remediations and recall on the bus: parse (done by the adapter), call the logic, answer. */
@Injectable()
export class RecallHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly checkpoints: CheckpointService,
    private readonly remediations: RemediationService,
    private readonly recalls: RecallService,
    private readonly memories: MemoryFeedbackService,
  ) {
    super(bus);
  }

  protected register(): void {
    const c = this.checkpoints;
    const r = this.remediations;
    this.handle(CheckpointRoutes.save, (p, ctx) => c.save(p.scope, p.checkpoint, p.writer, ctx));
    this.handle(CheckpointRoutes.list, (p) => c.list(p.scope, p.query));
    this.handle(CheckpointRoutes.get, (p) => c.get(p.scope, p.id));
    this.handle(CheckpointRoutes.resume, (p, ctx) => c.resume(p.scope, p.id, p.level, ctx));
    this.handle(RemediationRoutes.record, (p) => r.record(p.scope, p.remediation, p.writer));
    this.handle(RemediationRoutes.get, (p) => r.get(p.scope, p.id));
    this.handle(RemediationRoutes.search, (p) => r.search(p.scope, p.query));
    this.handle(RemediationRoutes.feedback, (p) => r.rate(p.scope, p.id, p.feedback));
    this.handle(MemoryRoutes.purgeAgent, async (p) => {
      const memories = await this.memories.purge(p.scope);
      return { memories, checkpoints: await c.purge(p.scope), remediations: await r.purge(p.scope) };
    });
    this.handle(RecallRoutes.recall, (p, ctx) => this.recalls.recall(p.scope, p.query, ctx));
  }
}
