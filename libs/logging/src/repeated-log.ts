/** What a RepeatedLog writes to: a pino logger, or any with warn (and info, else warn is used for the end line). */
export interface RepeatLogger {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface RepeatedLogOptions {
  /** How often a summary of the repeats still going on is logged (default 60 s). */
  readonly summaryEveryMs?: number;
  readonly now?: () => number;
}

interface Kind {
  readonly msg: string;
  readonly since: number;
  /** Repeats since the last summary. */
  count: number;
  total: number;
}

/**
 * Warnings that repeat once per request while something is away (every request refused during a broker outage) as
 * state changes and summaries instead of a line each: the first of a kind is logged whole ("started"); the rest are
 * counted, with one line per `summaryEveryMs` while they go on saying how many there were; the first period with none
 * logs that the kind stopped, with its total. Each repeat is still counted where metrics count its request.
 */
export class RepeatedLog {
  private readonly kinds = new Map<string, Kind>();
  private readonly everyMs: number;
  private readonly now: () => number;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly logger: RepeatLogger,
    options: RepeatedLogOptions = {},
  ) {
    this.everyMs = options.summaryEveryMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** A warning of `kind` (a bounded key, such as an error code and the dependency that is away). */
  warn(kind: string, fields: Record<string, unknown>, msg: string): void {
    const known = this.kinds.get(kind);
    if (known) {
      known.count++;
      known.total++;
      return;
    }
    this.kinds.set(kind, { msg, since: this.now(), count: 0, total: 1 });
    this.logger.warn({ ...fields, repeated: kind, state: 'started' }, msg);
    this.timer ??= setInterval(() => this.summarize(), this.everyMs).unref();
  }

  /** Logs a summary line per kind still repeating, and an end line per kind that stopped (also called by the timer). */
  summarize(): void {
    const now = this.now();
    for (const [kind, k] of this.kinds) {
      const since = new Date(k.since).toISOString();
      if (k.count > 0) {
        this.logger.warn(
          { repeated: kind, state: 'ongoing', count: k.count, total: k.total, since },
          `${k.count} more in the last ${Math.round(this.everyMs / 1000)} s: ${k.msg}`,
        );
        k.count = 0;
      } else {
        const end = {
          repeated: kind,
          state: 'stopped',
          total: k.total,
          since,
          seconds: Math.round((now - k.since) / 1000),
        };
        (this.logger.info ?? this.logger.warn).call(this.logger, end, `stopped after ${k.total}: ${k.msg}`);
        this.kinds.delete(kind);
      }
    }
    if (this.kinds.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
