import type { SandboxProcess } from './sandbox-process.js';

export interface WarmPoolOptions {
  /** Idle processes kept per key; 0 disables the pool. */
  readonly perKey: number;
  /** Idle processes kept in all. */
  readonly maxIdle?: number;
  /** An idle process is killed after this long. */
  readonly idleMs?: number;
  /** A process is retired after this many runs, so what a skill leaves behind does not pile up. */
  readonly maxRuns?: number;
}

interface Idle {
  readonly key: string;
  readonly proc: SandboxProcess;
  readonly timer: NodeJS.Timeout;
}

/**
 * Kept-alive sandbox processes by key. The key names one tenant, one skill version and its exact sandbox (id,
 * digest, flags, environment), so a process only ever runs the skill version and tenant it was started for.
 * An idle process is stopped (SIGSTOP on its whole tree) until it is taken again.
 */
export class WarmPool {
  private readonly idle: Idle[] = [];
  private closed = false;

  constructor(private readonly options: WarmPoolOptions) {}

  get enabled(): boolean {
    return this.options.perKey > 0 && !this.closed;
  }

  /** A live idle process started for exactly this key, or undefined. */
  take(key: string): SandboxProcess | undefined {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const entry = this.idle[i]!;
      if (entry.key !== key) continue;
      this.idle.splice(i, 1);
      clearTimeout(entry.timer);
      if (entry.proc.alive) {
        entry.proc.thaw();
        return entry.proc;
      }
      entry.proc.kill();
    }
    return undefined;
  }

  /** Keeps a process that ended its run cleanly, or kills it when the pool is full, closed or it is worn. */
  give(key: string, proc: SandboxProcess): void {
    const sameKey = this.idle.filter((e) => e.key === key).length;
    if (!this.enabled || !proc.alive || proc.runs >= (this.options.maxRuns ?? 500) || sameKey >= this.options.perKey) {
      proc.kill();
      return;
    }
    // Frozen while idle: no timer, no allocation, no CPU until the next run of the same tenant and version.
    proc.freeze();
    const timer = setTimeout(() => this.evict(proc), this.options.idleMs ?? 60_000);
    timer.unref();
    this.idle.push({ key, proc, timer });
    proc.onExit(() => this.evict(proc));
    while (this.idle.length > (this.options.maxIdle ?? 16)) this.evict(this.idle[0]!.proc);
  }

  /** Pids of idle processes by key (for tests and diagnostics). */
  idlePids(): Array<{ key: string; pid: number | undefined }> {
    return this.idle.map((e) => ({ key: e.key, pid: e.proc.pid }));
  }

  close(): void {
    this.closed = true;
    for (const entry of this.idle.splice(0)) {
      clearTimeout(entry.timer);
      entry.proc.kill();
    }
  }

  private evict(proc: SandboxProcess): void {
    const at = this.idle.findIndex((e) => e.proc === proc);
    if (at < 0) return;
    clearTimeout(this.idle[at]!.timer);
    this.idle.splice(at, 1);
    proc.kill();
  }
}
