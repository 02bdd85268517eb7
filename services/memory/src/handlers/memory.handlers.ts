import { Inject, Injectable } from '@nestjs/common';
import { MemoryRoutes } from '#contracts';
import { BUS, type Bus } from '#bus';
import { BusHandlers } from '#runtime';
import { MemoryFeedbackService } from '../feedback/memory-feedback.service.js';
import { MemoryService } from '../memory.service.js';
import { MemorySearch } from '../search/memory-search.js';
import { Reindexer } from '../reindexer.js';

/** Memory operations on the bus: parse (done by the adapter), call the logic, answer. */
@Injectable()
export class MemoryHandlers extends BusHandlers {
  constructor(
    @Inject(BUS) bus: Bus,
    private readonly memories: MemoryService,
    private readonly reindexer: Reindexer,
    private readonly feedback: MemoryFeedbackService,
    private readonly searches: MemorySearch,
  ) {
    super(bus);
  }

  protected register(): void {
    const m = this.memories; // secrets refused, provenance and injection mark recorded: one write
    const f = this.feedback; // reads that show feedback counts and rank by them
    this.handle(MemoryRoutes.create, (p) => m.create(p.scope, p.memory, p.source, p.writer));
    this.handle(MemoryRoutes.batchCreate, (p) => m.batchCreate(p.scope, p.memories, p.source, p.writer));
    this.handle(MemoryRoutes.ingestConversation, (p) => m.ingestConversation(p.scope, p.conversation, p.writer));
    this.handle(MemoryRoutes.get, (p) => f.get(p.scope, p.id));
    this.handle(MemoryRoutes.update, (p) => m.update(p.scope, p.id, p.patch));
    this.handle(MemoryRoutes.delete, (p) => m.delete(p.scope, p.id));
    this.handle(MemoryRoutes.batchDelete, (p) => m.batchDelete(p.scope, p.ids));
    this.handle(MemoryRoutes.list, (p) => f.list(p.scope, p.query));
    this.handle(MemoryRoutes.search, (p) => this.searches.search(p.scope, p.query));
    this.handle(MemoryRoutes.history, (p) => m.history(p.scope, p.id));
    this.handle(MemoryRoutes.feedback, (p) => f.rate(p.scope, p.id, p.feedback));
    this.handle(MemoryRoutes.reindex, () => this.reindexer.reindex());
  }
}
