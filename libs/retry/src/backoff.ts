export interface BackoffOptions {
  /** The first step (default 250 ms). */
  readonly baseMs?: number;
  /** The longest step (default 2 s): a dependency that comes back is found within this. */
  readonly maxMs?: number;
}

/**
 * Capped exponential backoff with jitter: step n is min(maxMs, baseMs·2ⁿ) and its delay is drawn from [step/2, step],
 * so clients that failed together do not retry together. `reset` after a success starts over.
 */
export class Backoff {
  private attempt = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 250;
    this.maxMs = options.maxMs ?? 2_000;
  }

  next(): number {
    const step = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt++, 16));
    return Math.round(step / 2 + (Math.random() * step) / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}
