import { ErrorCode, hasWriterFilter, type Memory, type MemoryListQuery, type Scope, type TrustMark, type Writer } from '#contracts';
import { describeReasons, detectInjection } from '#content-safety';
import { AlfredError } from '#errors';
import type { MemoryProvenanceRepository, ProvenanceQuery } from './memory-provenance.repository.js';

/** Most matching memories a provenance-filtered list looks at (newest first). */
const FILTER_CAP = 5_000;
/** Candidates a provenance-filtered search ranks before filtering (the search limit's maximum). */
const SEARCH_POOL = 50;

/** The injection check of one text: its mark, with reasons when flagged. */
export function trustOf(text: string): TrustMark {
  const reasons = describeReasons(detectInjection(text));
  return { flagged: reasons.length > 0, reasons };
}

export function hasProvenanceFilter(q: ProvenanceQuery): boolean {
  return hasWriterFilter(q) || q.flagged !== undefined;
}

/**
 * Provenance and trust of memories: recorded after each write (undone with it when it cannot be recorded),
 * attached to every read as the additional fields `provenance` and `trust`, and used as list/search filters.
 */
export class MemoryProvenance {
  constructor(
    private readonly repo: MemoryProvenanceRepository,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records who wrote each memory and its mark (`checked[i]` is the text the check ran on); `undo` removes the memories when this fails. */
  async record<M extends { id: string }>(scope: Scope, writer: Writer | undefined, memories: readonly M[], checked: readonly string[], undo: () => Promise<unknown>): Promise<M[]> {
    const at = this.now().toISOString();
    const entries = memories.map((m, i) => ({ id: m.id, record: { writer: writer ?? {}, written_at: at, trust: trustOf(checked[i] ?? '') } }));
    try {
      await this.repo.save(scope, entries);
    } catch (err) {
      await undo().catch(() => undefined);
      throw new AlfredError(ErrorCode.ServiceUnavailable, 'the provenance of the write could not be recorded; nothing was stored', undefined, { cause: err });
    }
    return memories.map((m, i) => ({ ...m, provenance: { tenant: scope.tenant, agent: scope.agent, ...entries[i]!.record.writer, written_at: at }, trust: entries[i]!.record.trust }));
  }

  /** A content change is checked again; who first wrote it stays. */
  async recheck(scope: Scope, id: string, content: string): Promise<void> {
    const before = (await this.repo.getMany(scope, [id])).get(id);
    const { tenant: _t, agent: _a, trust: _trust, written_at, ...writer } = before ?? { tenant: '', agent: '', trust: undefined, written_at: this.now().toISOString() };
    await this.repo.save(scope, [{ id, record: { writer, written_at, trust: trustOf(content) } }]);
  }

  /** Memories, checkpoints and remediations alike: their ids are unique UUIDs in one provenance collection. */
  async decorate<M extends { id: string }>(scope: Scope, memories: readonly M[]): Promise<M[]> {
    const found = await this.repo.getMany(scope, memories.map((m) => m.id));
    return memories.map((m) => {
      const p = found.get(m.id);
      if (!p) return m;
      const { trust, ...provenance } = p;
      return { ...m, provenance, trust };
    });
  }

  /** A list page; with provenance filters the page is taken from the matching memories (newest FILTER_CAP). */
  async list(scope: Scope, query: MemoryListQuery, plain: (q: MemoryListQuery) => Promise<{ memories: Memory[]; pagination: { total: number; limit: number; offset: number; has_more: boolean } }>, byId: (id: string) => Promise<Memory | undefined>) {
    const filtered = hasProvenanceFilter(query);
    if (!filtered && query.tag_prefix === undefined) {
      const page = await plain(query);
      return { ...page, memories: await this.decorate(scope, page.memories) };
    }
    const admits = filtered ? await this.admits(scope, query) : () => true;
    let found: Memory[];
    // A tag prefix is matched here, over the scope's first FILTER_CAP memories in the list's order (stores match whole tags).
    if (onlyUnflagged(query) || !filtered) {
      // Memories without a provenance row (written before it was recorded) are unflagged: list everything, drop the flagged.
      const page = async (offset: number) => (await plain({ ...query, limit: PAGE, offset })).memories;
      found = (await collectAll(page)).filter((m) => admits(m.id));
    } else {
      found = (await Promise.all((await this.repo.matching(scope, query, FILTER_CAP)).map(byId))).filter((m): m is Memory => m !== undefined);
    }
    const kept = found
      .filter((m) => (!query.date || m.date === query.date) && (!query.tag || m.tags.includes(query.tag)) && (!query.source || m.source === query.source))
      .filter((m) => query.tag_prefix === undefined || hasTagPrefix(m.tags, query.tag_prefix))
      .sort(comparator(query));
    const page = kept.slice(query.offset, query.offset + query.limit);
    return {
      memories: await this.decorate(scope, page),
      pagination: { total: kept.length, limit: query.limit, offset: query.offset, has_more: query.offset + page.length < kept.length },
    };
  }

  /**
   * Search results with provenance (memories, remediations); with filters, the best SEARCH_POOL candidates are ranked
   * and then filtered.
   */
  async search<Q extends ProvenanceQuery & { limit: number }, R extends { results: Array<{ id: string }>; total: number }>(
    scope: Scope,
    query: Q,
    plain: (q: Q) => Promise<R>,
  ): Promise<R> {
    if (!hasProvenanceFilter(query)) {
      const res = await plain(query);
      return { ...res, results: await this.decorate(scope, res.results) };
    }
    const res = await plain({ ...query, limit: SEARCH_POOL });
    const admits = await this.admits(scope, query);
    const results = res.results.filter((r) => admits(r.id)).slice(0, query.limit);
    // `total` counts the matches among the ranked pool (a filtered search looks no further).
    return { ...res, results: await this.decorate(scope, results), total: results.length };
  }

  /**
   * A checkpoint list page by the provenance filters: the scope's items (newest first, up to FILTER_CAP, fetched
   * page by page through `plain`) that match, then the asked page.
   */
  async listItems<T extends { id: string }>(
    scope: Scope,
    query: ProvenanceQuery & { limit: number; offset: number },
    plain: (limit: number, offset: number) => Promise<{ items: T[]; total: number }>,
  ): Promise<{ items: T[]; total: number }> {
    if (!hasProvenanceFilter(query)) {
      const page = await plain(query.limit, query.offset);
      return { items: await this.decorate(scope, page.items), total: page.total };
    }
    const all = await collectAll(async (offset) => (await plain(PAGE, offset)).items);
    const admits = await this.admits(scope, query);
    const kept = all.filter((i) => admits(i.id));
    return { items: await this.decorate(scope, kept.slice(query.offset, query.offset + query.limit)), total: kept.length };
  }

  /** `flagged=false` alone excludes the flagged (so memories without a provenance row pass); other filters include the matches. */
  private async admits(scope: Scope, query: ProvenanceQuery): Promise<(id: string) => boolean> {
    if (onlyUnflagged(query)) {
      const flagged = new Set(await this.repo.matching(scope, { flagged: true }, FILTER_CAP));
      return (id) => !flagged.has(id);
    }
    const matching = new Set(await this.repo.matching(scope, query, FILTER_CAP));
    return (id) => matching.has(id);
  }

  delete(scope: Scope, ids: readonly string[]): Promise<string[]> {
    return this.repo.delete(scope, ids);
  }

  purge(scope: Scope): Promise<number> {
    return this.repo.purge(scope);
  }
}

function hasTagPrefix(tags: readonly string[], prefix: string): boolean {
  const p = prefix.toLowerCase();
  return tags.some((t) => t.toLowerCase().startsWith(p));
}

function onlyUnflagged(q: ProvenanceQuery): boolean {
  return q.flagged === false && !hasWriterFilter(q);
}

/** Page size of the scans a provenance-filtered list makes. */
const PAGE = 100;

/** Every item of a list, page by page (`page(offset)`, PAGE at a time), up to FILTER_CAP. */
async function collectAll<T>(page: (offset: number) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const items = await page(all.length);
    all.push(...items);
    if (items.length < PAGE || all.length >= FILTER_CAP) return all;
  }
}

function comparator(q: MemoryListQuery): (a: Memory, b: Memory) => number {
  const sign = q.sort_order === 'asc' ? 1 : -1;
  return q.sort_by === 'importance'
    ? (a, b) => sign * (a.importance - b.importance) || a.id.localeCompare(b.id)
    : (a, b) => sign * a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id);
}
