import { MEMORY_STREAM, type MemoryChange } from '#contracts';
import type { Bus } from '#bus';

/** Where the memory changes recorded on the durable stream are read back as history (written by DurableChanges). */
export interface MemoryHistory {
  history(id: string): Promise<MemoryChange[]>;
}

/** The memory event stream on the bus: JetStream in NATS mode, an fsynced log in-process. */
export class BusMemoryHistory implements MemoryHistory {
  constructor(private readonly bus: Bus) {}

  async history(id: string): Promise<MemoryChange[]> {
    const changes: MemoryChange[] = [];
    for await (const e of this.bus.readEvents(MEMORY_STREAM, `alfred.memory.*.v1.${id}`)) {
      changes.push(e.payload as MemoryChange);
    }
    return changes;
  }
}
