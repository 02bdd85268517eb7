import type { spawn } from 'node:child_process';
import { signalTree } from '../os/process-tree.js';

/** Why a command was stopped before it ended by itself. */
export type BashStop = 'timeout' | 'cancelled' | 'quota';

export interface Captured {
  readonly output: string;
  readonly dropped: number;
  readonly code: number | null;
  readonly stopped?: BashStop;
}

/** A check repeated while the command runs; when it answers true the command is stopped (its disk quota). */
export interface RunningCheck {
  readonly everyMs: number;
  exceeded(): Promise<boolean>;
}

/** Collects output up to the cap; kills the whole sandbox on timeout, cancel or a failed running check. */
export function capture(
  child: ReturnType<typeof spawn>,
  run: { readonly timeoutMs: number; readonly maxOutputChars: number; readonly signal: AbortSignal },
  check?: RunningCheck,
): Promise<Captured> {
  return new Promise((resolve) => {
    let output = '';
    let dropped = 0;
    let stopped: BashStop | undefined;
    let ended = false;
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const room = run.maxOutputChars - output.length;
      if (room > 0) output += text.slice(0, room);
      dropped += Math.max(0, text.length - Math.max(room, 0));
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const kill = (why: BashStop) => {
      stopped ??= why;
      if (child.pid === undefined) return;
      signalTree(child.pid, 'SIGKILL');
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('timeout'), run.timeoutMs);
    const onAbort = () => kill('cancelled');
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (check)
      void watch(
        check,
        () => ended,
        () => kill('quota'),
      );
    const finish = (code: number | null, error?: Error) => {
      ended = true;
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
      if (error) output += `could not run bash: ${error.message}`;
      resolve({ output, dropped, code: error ? null : code, ...(stopped ? { stopped } : {}) });
    };
    child.once('error', (err) => finish(null, err));
    child.once('close', (code) => finish(code));
  });
}

/** Runs the check, pausing `everyMs` between rounds (a slow walk of a big folder never overlaps itself). */
async function watch(check: RunningCheck, ended: () => boolean, stop: () => void): Promise<void> {
  while (!ended()) {
    await new Promise((resolve) => setTimeout(resolve, check.everyMs));
    if (ended()) return;
    if (await check.exceeded().catch(() => false)) return stop();
  }
}
