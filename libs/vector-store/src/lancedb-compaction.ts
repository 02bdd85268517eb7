/** When the embedded store compacts a table (see CompactionSchedule). */
export interface CompactionPolicy {
  /** Rows written since the last compaction that a compaction waits for at least. */
  readonly minRows: number;
  /** Flushes after which a compaction runs whatever the rows: each flush adds a fragment and a table version. */
  readonly maxFlushes: number;
}

/**
 * LanceDB's `optimize()` (the only compaction its Node API offers) merges every fragment under its target of 1M rows
 * — the whole table, below that size — and frees what it replaced only on the next call. Compacting after a fixed
 * number of rows or commits therefore rewrites the table again and again as it grows: quadratic work and disk during
 * an ingestion. Here a compaction waits until the rows written since the last one reach half the table's size then,
 * so each row is rewritten a bounded number of times in all (the sizes grow geometrically: linear total work), and
 * `maxFlushes` bounds how many fragments and versions pile up under a trickle of small writes.
 */
export class CompactionSchedule {
  private rowsSince = 0;
  private flushesSince = 0;

  constructor(
    private readonly policy: CompactionPolicy,
    /** The table's rows at the last compaction (at open: its rows then). */
    private rowsAtLast: number,
  ) {}

  /** Counts a flush of `rows` rows; true when a compaction is due. */
  flushed(rows: number): boolean {
    this.rowsSince += rows;
    this.flushesSince++;
    if (this.flushesSince < 2) return false;
    return (
      this.rowsSince >= Math.max(this.policy.minRows, this.rowsAtLast / 2) ||
      this.flushesSince >= this.policy.maxFlushes
    );
  }

  compacted(rowsNow: number): void {
    this.rowsAtLast = rowsNow;
    this.rowsSince = 0;
    this.flushesSince = 0;
  }
}
