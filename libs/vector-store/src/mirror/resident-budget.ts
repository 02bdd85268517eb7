import { totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { Metrics } from '#metrics';

/** One scope's in-memory index as the budget sees it: its size, and how to drop it. */
interface Resident {
  bytes: number;
  readonly collection: string;
  readonly evict: () => void;
}

/**
 * The memory the in-memory scope indexes of this process may hold (ALFRED_MEMORY_CACHE_MB): scopes are loaded on
 * first use and the least recently used are dropped once the total passes the budget, to be loaded again when next
 * used. One budget for every collection of every store in the process, since they share its memory.
 */
export class ResidentBudget {
  private readonly residents = new Map<string, Resident>();
  private total = 0;

  constructor(private limit: number) {}

  get limitBytes(): number {
    return this.limit;
  }

  get residentBytes(): number {
    return this.total;
  }

  get residentScopes(): number {
    return this.residents.size;
  }

  setLimit(bytes: number): void {
    this.limit = bytes;
    this.enforce(undefined);
  }

  /** A scope was used: it becomes the most recently used. */
  touch(key: string): void {
    const r = this.residents.get(key);
    if (!r) return;
    this.residents.delete(key);
    this.residents.set(key, r);
  }

  /** A scope was loaded: counted, most recently used, and older ones dropped while the total is over the limit. */
  add(key: string, collection: string, bytes: number, evict: () => void): void {
    this.remove(key);
    this.residents.set(key, { bytes, collection, evict });
    this.total += bytes;
    Metrics.indexLoads.inc({ collection });
    this.enforce(key);
  }

  /** A resident scope grew or shrank (writes). */
  resize(key: string, bytes: number): void {
    const r = this.residents.get(key);
    if (!r) return;
    this.total += bytes - r.bytes;
    r.bytes = bytes;
    if (this.total > this.limit) this.enforce(key);
  }

  remove(key: string): void {
    const r = this.residents.get(key);
    if (!r) return;
    this.residents.delete(key);
    this.total -= r.bytes;
  }

  /**
   * Drops the least recently used scopes until the total fits; the scope in use (`keep`) stays even if alone too big.
   */
  private enforce(keep: string | undefined): void {
    for (const [key, r] of this.residents) {
      if (this.total <= this.limit) return;
      if (key === keep) continue;
      this.residents.delete(key);
      this.total -= r.bytes;
      Metrics.indexEvictions.inc({ collection: r.collection });
      r.evict();
    }
  }
}

/**
 * The default budget: a quarter of the memory this process may use (the container's limit when it has one, else the
 * machine's), between 256 MB and 4 GB.
 */
export function defaultResidentBytes(): number {
  const limit = Math.min(cgroupLimit() ?? Number.POSITIVE_INFINITY, totalmem());
  return Math.round(Math.min(4 * 2 ** 30, Math.max(256 * 2 ** 20, limit / 4)));
}

function cgroupLimit(): number | undefined {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const value = Number(readFileSync(path, 'utf8').trim());
      if (Number.isFinite(value) && value > 0) return value;
    } catch {
      // not this cgroup version
    }
  }
  return undefined;
}

/** The process's budget, shared by every embedded store in it; services set its limit from their config. */
export const residentBudget = new ResidentBudget(defaultResidentBytes());
Metrics.indexResidentBytes.track({}, () => residentBudget.residentBytes);
Metrics.indexResidentScopes.track({}, () => residentBudget.residentScopes);
Metrics.indexBudgetBytes.track({}, () => residentBudget.limitBytes);
