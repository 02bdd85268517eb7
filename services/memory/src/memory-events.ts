import { MEMORY_STREAM, MemoryEvents, type MemoryChange } from '#contracts';
import { randomUUID } from 'node:crypto';
import type { Bus } from '#bus';

/** Where every memory change is recorded durably, and read back as history. */
export interface MemoryEventLog {
  record(change: MemoryChange): Promise<void>;
  history(id: string): Promise<MemoryChange[]>;
}

/** The memory event stream on the bus: JetStream in NATS mode, an fsynced log in-process. */
export class BusMemoryEventLog implements MemoryEventLog {
  constructor(private readonly bus: Bus) {}

  record(change: MemoryChange): Promise<void> {
    return this.bus.publish(MemoryEvents[change.kind], change, {
      key: change.id,
      // Unique per change: a change undone and made again at the same version (an update after a failed one) is a
      // new event, not a duplicate JetStream would drop. A creation is one change whatever its retries (its id is
      // new, or derived from the client's Idempotency-Key), so its id deduplicates a retried creation's event.
      msgId: change.kind === 'created' ? `${change.id}:1:created` : `${change.id}:${change.version}:${change.kind}:${randomUUID()}`,
    });
  }

  async history(id: string): Promise<MemoryChange[]> {
    const changes: MemoryChange[] = [];
    for await (const e of this.bus.readEvents(MEMORY_STREAM, `alfred.memory.*.v1.${id}`)) {
      changes.push(e.payload as MemoryChange);
    }
    return changes;
  }
}
