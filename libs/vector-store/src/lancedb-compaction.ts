/** When the embedded store compacts a table and rebuilds its scalar indexes (see CompactionSchedule). */
export interface CompactionPolicy {
  /** Rows written since the last compaction that a compaction waits for at least; an index rebuild too. */
  readonly minRows: number;
  /** Flushes after which a compaction runs whatever the rows: each flush adds a fragment and a table version. */
  readonly maxFlushes: number;
  /** Rows the scalar indexes may leave uncovered, as a share of those they cover, before they are rebuilt. */
  readonly indexSlack: number;
}

/** What a flush makes due: a compaction (which also brings the indexes up to date), or only an index rebuild. */
export type Maintenance = 'compact' | 'reindex';

/**
 * LanceDB's `optimize()` (the only compaction its Node API offers) merges every fragment under its target of 1M rows
 * — the whole table, below that size — and frees what it replaced only on the next call. Compacting after a fixed
 * number of rows or commits therefore rewrites the table again and again as it grows: quadratic work and disk during
 * an ingestion. Here a compaction waits until the rows written since the last one reach half the table's size then,
 * so each row is rewritten a bounded number of times in all (the sizes grow geometrically: linear total work), and
 * `maxFlushes` bounds how many fragments and versions pile up under a trickle of small writes.
 *
 * Between compactions, rows the scalar indexes do not cover are scanned by every filtered read: up to a third of the
 * table, which made a cold scope's read at a million rows ~1.7x slower than with the tail covered. An index rebuild
 * reads only the indexed columns (~1.5 s for all of them at a million rows, against ~3 s and the whole table rewritten
 * for a compaction), so it runs whenever the uncovered rows reach `indexSlack` of the covered ones: geometric again,
 * each row's keys are read about 1 / indexSlack times in all.
 */
export class CompactionSchedule {
  private rowsSince = 0;
  private flushesSince = 0;
  /** Maintenance said due and not finished yet: a flush meanwhile does not ask for it again. */
  private due: Maintenance | undefined;

  constructor(
    private readonly policy: CompactionPolicy,
    /** The table's rows at the last compaction (at open: its rows then). */
    private rowsAtLast: number,
    /** Rows the indexes do not cover (at open: as the table's index statistics say). */
    private unindexed = 0,
  ) {}

  /** Counts a flush of `rows` rows; what maintenance is due after it, if any. */
  flushed(rows: number): Maintenance | undefined {
    this.rowsSince += rows;
    this.flushesSince++;
    this.unindexed += rows;
    if (this.flushesSince < 2 || this.due) return undefined;
    const covered = this.rowsAtLast + this.rowsSince - this.unindexed;
    if (
      this.rowsSince >= Math.max(this.policy.minRows, this.rowsAtLast / 2) ||
      this.flushesSince >= this.policy.maxFlushes
    )
      this.due = 'compact';
    else if (this.unindexed >= Math.max(this.policy.minRows, covered * this.policy.indexSlack)) this.due = 'reindex';
    return this.due;
  }

  compacted(rowsNow: number): void {
    this.rowsAtLast = rowsNow;
    this.rowsSince = 0;
    this.flushesSince = 0;
    this.unindexed = 0;
    this.due = undefined;
  }

  /** The indexes cover every row flushed so far (maintenance runs between flushes). */
  reindexed(): void {
    this.unindexed = 0;
    this.due = undefined;
  }

  /** The maintenance said due failed: the next flush may ask for it again. */
  failed(): void {
    this.due = undefined;
  }
}
