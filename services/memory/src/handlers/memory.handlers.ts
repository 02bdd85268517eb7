import { Inject, Injectable } from '@nestjs/common';
import { MemoryRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { MemoryFeedbackService } from '../feedback/memory-feedback.service.js';
import { MemoryService } from '../memory.service.js';
import { MemoryProvenance } from '../provenance/memory-provenance.service.js';
import { MemorySearch } from '../search/memory-search.js';
import { Reindexer } from '../reindexer.js';
import { TrustedMemoryWrites } from '../safety/trusted-memory-writes.js';

/** Memory operations on the bus: parse (done by the adapter), call the logic, answer. */
@Injectable()
export class MemoryHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly memories: MemoryService,
    private readonly reindexer: Reindexer,
    private readonly feedback: MemoryFeedbackService,
    private readonly searches: MemorySearch,
    private readonly writes: TrustedMemoryWrites,
    private readonly provenance: MemoryProvenance,
  ) {
    super(bus);
  }

  protected register(): void {
    const m = this.memories;
    const w = this.writes; // secrets refused first, provenance and injection marks recorded after
    this.handle(MemoryRoutes.create, (p) => w.create(p.scope, p.memory, p.source, p.writer));
    this.handle(MemoryRoutes.batchCreate, (p) => w.batchCreate(p.scope, p.memories, p.source, p.writer));
    this.handle(MemoryRoutes.ingestConversation, (p) => w.ingestConversation(p.scope, p.conversation, p.writer));
    const f = this.feedback; // reads that show feedback counts and rank by them
    const pv = this.provenance; // reads that show provenance and trust, and filter by them
    this.handle(MemoryRoutes.get, async (p) => (await pv.decorate(p.scope, [await f.get(p.scope, p.id)]))[0]!);
    this.handle(MemoryRoutes.update, (p) => w.update(p.scope, p.id, p.patch));
    this.handle(MemoryRoutes.delete, (p) => w.delete(p.scope, p.id));
    this.handle(MemoryRoutes.batchDelete, (p) => w.batchDelete(p.scope, p.ids));
    this.handle(MemoryRoutes.list, (p) =>
      pv.list(p.scope, p.query, (q) => f.list(p.scope, q), (id) => f.get(p.scope, id).catch(() => undefined)),
    );
    this.handle(MemoryRoutes.search, (p) => pv.search(p.scope, p.query, (q) => this.searches.search(p.scope, q)));
    this.handle(MemoryRoutes.history, (p) => m.history(p.scope, p.id));
    this.handle(MemoryRoutes.feedback, (p) => f.rate(p.scope, p.id, p.feedback));
    this.handle(MemoryRoutes.reindex, () => this.reindexer.reindex());
  }
}
