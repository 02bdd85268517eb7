import { Inject, Injectable } from '@nestjs/common';
import { CheckpointRoutes, MemoryRoutes, RecallRoutes, RemediationRoutes, type Scope, type Writer } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { CheckpointService } from '../checkpoints/checkpoint.service.js';
import { MemoryFeedbackService } from '../feedback/memory-feedback.service.js';
import { RecallService } from '../recall/recall.service.js';
import { RemediationService } from '../remediations/remediation.service.js';
import { MemoryWriteGuard } from '../safety/memory-write.guard.js';
import { MemoryProvenance } from '../provenance/memory-provenance.service.js';

/** Checkpoints, remediations and recall on the bus: parse (done by the adapter), call the logic, answer. */
@Injectable()
export class RecallHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly checkpoints: CheckpointService,
    private readonly remediations: RemediationService,
    private readonly guard: MemoryWriteGuard,
    private readonly recalls: RecallService,
    private readonly memories: MemoryFeedbackService,
    private readonly provenance: MemoryProvenance,
  ) {
    super(bus);
  }

  protected register(): void {
    const c = this.checkpoints;
    const r = this.remediations;
    const g = this.guard; // secrets are never stored: checked before the write starts
    const pv = this.provenance; // who wrote each checkpoint and remediation, shown on every read
    const marked = <T extends { id: string }>(scope: Scope, writer: Writer | undefined, item: T, text: string, undo: () => Promise<unknown>) =>
      pv.record(scope, writer, [item], [text], undo).then(([one]) => one!);
    this.handle(CheckpointRoutes.save, async (p, ctx) => {
      const checkpoint = await g.record(p.scope, p.checkpoint);
      const saved = await c.save(p.scope, checkpoint, ctx);
      return marked(p.scope, p.writer, saved, [checkpoint.summary, ...checkpoint.done, ...checkpoint.next].join('\n'), () => c.discard(p.scope, saved.id));
    });
    this.handle(CheckpointRoutes.list, async (p) => {
      const { limit, offset } = p.query;
      const plain = async (l: number, o: number) => {
        const page = await c.list(p.scope, { ...p.query, limit: l, offset: o });
        return { items: page.checkpoints, total: page.pagination.total };
      };
      const { items, total } = await pv.listItems(p.scope, p.query, plain);
      return { checkpoints: items, pagination: { total, limit, offset, has_more: offset + items.length < total } };
    });
    this.handle(CheckpointRoutes.get, async (p) => (await pv.decorate(p.scope, [await c.get(p.scope, p.id)]))[0]!);
    this.handle(CheckpointRoutes.resume, (p, ctx) => c.resume(p.scope, p.id, p.level, ctx));
    this.handle(RemediationRoutes.record, async (p) => {
      const remediation = await g.record(p.scope, p.remediation);
      const saved = await r.record(p.scope, remediation);
      return marked(p.scope, p.writer, saved, [remediation.error_message, remediation.fix].join('\n'), () => r.discard(p.scope, saved.id));
    });
    this.handle(RemediationRoutes.get, async (p) => (await pv.decorate(p.scope, [await r.get(p.scope, p.id)]))[0]!);
    this.handle(RemediationRoutes.search, (p) => pv.search(p.scope, p.query, (q) => r.search(p.scope, q)));
    this.handle(RemediationRoutes.feedback, (p) => r.rate(p.scope, p.id, p.feedback));
    this.handle(MemoryRoutes.purgeAgent, async (p) => {
      const memories = await this.memories.purge(p.scope);
      await this.provenance.purge(p.scope); // the memories' provenance rows go with them
      return { memories, checkpoints: await c.purge(p.scope), remediations: await r.purge(p.scope) };
    });
    this.handle(RecallRoutes.recall, (p, ctx) => this.recalls.recall(p.scope, p.query, ctx));
  }
}
