/** How a group of row writes is committed: `add` for rows with new ids, merge-insert when any may exist. */
export type WriteMode = 'insert' | 'upsert';

interface WriteOp<R> {
  readonly kind: 'write';
  readonly mode: WriteMode;
  readonly rows: readonly R[];
  readonly done: Settle<void>;
}

interface TaskOp {
  readonly kind: 'task' | 'beside-inserts';
  readonly run: () => Promise<unknown>;
  readonly done: Settle<unknown>;
}

interface Settle<T> {
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** Commits one group of rows (one table version); told whether any of them may replace existing rows. */
export type CommitRows<R> = (rows: readonly R[], mode: WriteMode) => Promise<void>;

/**
 * Runs a table's writes and maintenance one at a time, in arrival order, and commits row writes that
 * queue up behind a running operation together: one LanceDB commit (one manifest, one fragment) for
 * all of them instead of one each. Every caller still resolves only after its rows' commit completed,
 * and a failed commit rejects every caller in its group.
 */
export class LanceDbWriteQueue<R> {
  private readonly pending: Array<WriteOp<R> | TaskOp> = [];
  private draining: Promise<void> | undefined;
  /** A `besideInserts` task still running; only insert commits may pass it. */
  private beside: Promise<void> | undefined;

  constructor(
    private readonly commit: CommitRows<R>,
    /** The most rows committed at once; later writes wait for the next commit. */
    private readonly maxRows = 5_000,
  ) {}

  write(rows: readonly R[], mode: WriteMode): Promise<void> {
    return new Promise<void>((resolve, reject) => this.push({ kind: 'write', mode, rows, done: { resolve, reject } }));
  }

  /** Runs `run` alone, after everything queued before it and before everything queued after it. */
  task<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.push({ kind: 'task', run, done: { resolve: resolve as (v: unknown) => void, reject } }));
  }

  /**
   * Like `task`, but insert-only commits queued after it may run while it does (LanceDB commits appends
   * concurrently with compaction and index updates); everything else waits for it. For maintenance, so
   * that creating memories does not stall behind it.
   */
  besideInserts<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.push({ kind: 'beside-inserts', run, done: { resolve: resolve as (v: unknown) => void, reject } }),
    );
  }

  /** Resolves once everything queued so far has been run. */
  async idle(): Promise<void> {
    while (this.draining || this.beside) await (this.draining ?? this.beside);
  }

  private push(op: WriteOp<R> | TaskOp): void {
    this.pending.push(op);
    this.draining ??= this.drain();
  }

  /** Runs until the queue is empty; `draining` is cleared in the same turn the queue is seen empty, so no push is stranded. */
  private async drain(): Promise<void> {
    // Never finish synchronously: `draining` must be assigned before the loop can clear it.
    await undefined;
    for (;;) {
      if (this.pending.length === 0) {
        this.draining = undefined;
        return;
      }
      const head = this.pending[0]!;
      if (this.beside && !(head.kind === 'write' && head.mode === 'insert')) {
        await this.beside;
        continue;
      }
      if (head.kind === 'task') {
        this.pending.shift();
        await Promise.resolve().then(head.run).then(head.done.resolve, head.done.reject);
        continue;
      }
      if (head.kind === 'beside-inserts') {
        this.pending.shift();
        const running: Promise<void> = Promise.resolve()
          .then(head.run)
          .then(head.done.resolve, head.done.reject)
          .finally(() => {
            if (this.beside === running) this.beside = undefined;
          });
        this.beside = running;
        continue;
      }
      const group = this.takeWrites();
      const rows = group.flatMap((op) => op.rows);
      const mode: WriteMode = group.some((op) => op.mode === 'upsert') ? 'upsert' : 'insert';
      await this.commit(rows, mode).then(
        () => group.forEach((op) => op.done.resolve()),
        (err: unknown) => group.forEach((op) => op.done.reject(err)),
      );
    }
  }

  /** The leading run of row writes (only inserts while a `besideInserts` task runs), up to maxRows (always at least one). */
  private takeWrites(): WriteOp<R>[] {
    const group: WriteOp<R>[] = [];
    let rows = 0;
    while (this.pending[0]?.kind === 'write') {
      const op = this.pending[0];
      if (this.beside && op.mode !== 'insert') break;
      if (group.length > 0 && rows + op.rows.length > this.maxRows) break;
      this.pending.shift();
      group.push(op);
      rows += op.rows.length;
    }
    return group;
  }
}
