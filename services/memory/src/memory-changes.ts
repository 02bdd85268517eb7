import { join } from 'node:path';
import { CheckpointEvents, MemoryEvents, RemediationEvents, type EventDef, type Scope } from '#contracts';
import { DurableChanges, type DurableChangesOptions, type JournalTarget, type OutboxEvent } from '#durable';
import { type Bus } from '#bus';

/** The stores the memory service's changes land in, as the outbox asks them after a crash. */
export interface ChangeStores {
  readonly memories: { get(scope: Scope, id: string): Promise<{ version: number } | undefined> };
  readonly remediations?: {
    get(scope: Scope, id: string): Promise<{ remediation: { created_at: string; updated_at?: string } } | undefined>;
  };
  readonly checkpoints?: { get(scope: Scope, id: string): Promise<unknown> };
}

interface ChangePayload {
  readonly tenant: string;
  readonly agent: string;
  readonly id: string;
  readonly version?: number;
  readonly at: string;
}

const EVENTS: readonly EventDef[] = [
  ...Object.values(MemoryEvents),
  ...Object.values(RemediationEvents),
  ...Object.values(CheckpointEvents),
];

/** The outbox folder of the memory service under its data dir (shared by instances sharing the dir). */
export const memoryOutboxDir = (dataDir: string) => join(dataDir, 'outbox', 'memory');

/**
 * The memory service's durable-change path: one outbox for memories, feedback, remediations and checkpoints, and the
 * "did it land?" answer for a change a crash interrupted — read from the store the change was written to.
 */
export function openMemoryChanges(
  bus: Bus,
  dir: string,
  stores: ChangeStores,
  logger: DurableChangesOptions['logger'],
  /** The collections whose writes the outbox carries (the embedded store's; none with Qdrant). */
  targets: readonly JournalTarget[] = [],
): Promise<DurableChanges> {
  const landed = async (e: OutboxEvent): Promise<boolean> => {
    const p = e.payload as ChangePayload;
    const scope = { tenant: p.tenant, agent: p.agent };
    switch (e.subject) {
      case MemoryEvents.created.subject:
      case MemoryEvents.updated.subject:
        return ((await stores.memories.get(scope, p.id))?.version ?? 0) >= (p.version ?? 1);
      case MemoryEvents.deleted.subject:
        return (await stores.memories.get(scope, p.id)) === undefined;
      // Feedback events are made from the increment's result and recorded with the commit: never asked here.
      case RemediationEvents.recorded.subject:
        return (await stores.remediations?.get(scope, p.id)) !== undefined;
      case RemediationEvents.rated.subject: {
        const r = (await stores.remediations?.get(scope, p.id))?.remediation;
        return r !== undefined && (r.updated_at ?? r.created_at) >= p.at;
      }
      case CheckpointEvents.saved.subject:
        return (await stores.checkpoints?.get(scope, p.id)) !== undefined;
      default:
        return false;
    }
  };
  return DurableChanges.open({ bus, dir, events: EVENTS, landed, logger, targets });
}
