import type { CollectionWrite } from './collection-write.js';
import type { Doc, DocScope } from './vector-store.js';

/** What a group of writes leaves of one document: its last state, and whether the table may hold an older one. */
interface Outcome {
  readonly doc: Doc | undefined;
  /** False only when the document's first write in the group was an insert (a new id): then `add` suffices. */
  readonly mayExist: boolean;
}

/** The table operations a group of writes comes down to: at most one delete, one add and one merge. */
export interface CollapsedWrites {
  readonly deletes: ReadonlyMap<string, { scope: DocScope; ids: string[] }>;
  readonly inserts: readonly Doc[];
  readonly upserts: readonly Doc[];
  readonly rows: number;
}

const key = (tenant: string, agent: string, id: string) => `${tenant}\u0000${agent}\u0000${id}`;
export const scopeKeyOf = (scope: DocScope) => `${scope.tenant}\u0000${scope.agent}`;

/**
 * A write waiting for the table. Journaled writes are durable in the caller's log and already visible in memory;
 * direct ones (no `settle` for journaled) become visible and are answered only once the table commit holds them.
 */
export interface PendingWrite {
  readonly write: CollectionWrite;
  readonly settle?: { resolve(): void; reject(err: unknown): void };
  /** A direct delete's answer: the ids that existed when it was applied (found by the flush that commits it). */
  readonly deleted?: (found: string[]) => void;
  found?: string[];
}

/**
 * Writes not yet in the table, in apply order. A flush takes them all and collapses them to their net effect per
 * document; reads of the table that must see them (lists, scans) flush first, or apply them on top of what they
 * read (a scope load).
 */
export class PendingWrites {
  private writes: PendingWrite[] = [];
  private readonly perScope = new Map<string, number>();
  private rowCount = 0;

  get rows(): number {
    return this.rowCount;
  }

  get size(): number {
    return this.writes.length;
  }

  push(entry: PendingWrite): void {
    const { write } = entry;
    this.writes.push(entry);
    const scopes = write.kind === 'delete' ? [write.scope] : write.docs;
    for (const s of scopes) {
      const k = scopeKeyOf(s);
      this.perScope.set(k, (this.perScope.get(k) ?? 0) + 1);
    }
    this.rowCount += write.kind === 'delete' ? write.ids.length : write.docs.length;
  }

  touches(scope: DocScope): boolean {
    return this.perScope.has(scopeKeyOf(scope));
  }

  /**
   * The scope's visible (journaled) writes, in apply order: what a read of the table must be brought up to date with.
   */
  forScope(scope: DocScope): CollectionWrite[] {
    if (!this.touches(scope)) return [];
    const k = scopeKeyOf(scope);
    const out: CollectionWrite[] = [];
    for (const { write: w, settle } of this.writes) {
      if (settle) continue;
      if (w.kind === 'delete') {
        if (scopeKeyOf(w.scope) === k) out.push(w);
        continue;
      }
      const docs = w.docs.filter((d) => scopeKeyOf(d) === k);
      if (docs.length > 0) out.push({ kind: w.kind, docs });
    }
    return out;
  }

  /** Removes and returns every pending write (a flush); `restore` puts them back in front when it fails. */
  take(): PendingWrite[] {
    const taken = this.writes;
    this.writes = [];
    this.perScope.clear();
    this.rowCount = 0;
    return taken;
  }

  restore(entries: readonly PendingWrite[]): void {
    const later = this.take();
    for (const e of [...entries, ...later]) this.push(e);
  }
}

/** The net effect of writes applied in order: the last write of each document wins. */
export function collapse(writes: readonly CollectionWrite[]): CollapsedWrites {
  const outcomes = new Map<string, Outcome>();
  for (const w of writes) {
    if (w.kind === 'delete') {
      for (const id of w.ids) {
        const k = key(w.scope.tenant, w.scope.agent, id);
        outcomes.set(k, { doc: undefined, mayExist: outcomes.get(k)?.mayExist ?? true });
      }
      continue;
    }
    for (const doc of w.docs) {
      const k = key(doc.tenant, doc.agent, doc.id);
      const before = outcomes.get(k);
      outcomes.set(k, { doc, mayExist: before ? before.mayExist : w.kind === 'upsert' });
    }
  }
  const deletes = new Map<string, { scope: DocScope; ids: string[] }>();
  const inserts: Doc[] = [];
  const upserts: Doc[] = [];
  for (const [k, o] of outcomes) {
    if (o.doc) (o.mayExist ? upserts : inserts).push(o.doc);
    else if (o.mayExist) {
      const [tenant, agent, id] = k.split('\u0000') as [string, string, string];
      const sk = scopeKeyOf({ tenant, agent });
      let group = deletes.get(sk);
      if (!group) deletes.set(sk, (group = { scope: { tenant, agent }, ids: [] }));
      group.ids.push(id);
    }
  }
  return { deletes, inserts, upserts, rows: outcomes.size };
}
