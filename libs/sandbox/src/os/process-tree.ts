import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = 100;

/** `pid` and every process below it (from /proc/<pid>/task/<tid>/children), parents first. */
export function processTree(pid: number): number[] {
  const seen: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && seen.length < 4096) {
    const next = queue.shift()!;
    seen.push(next);
    for (const tid of read(`/proc/${next}/task`, true)) {
      for (const child of read(`/proc/${next}/task/${tid}/children`).split(' '))
        if (/^\d+$/.test(child)) queue.push(Number(child));
    }
  }
  return seen;
}

/** Resident memory of the whole tree in KiB (Buffers count: they live outside the V8 heap). */
export function treeRssKb(pid: number): number {
  let total = 0;
  for (const p of processTree(pid)) total += Number(/VmRSS:\s+(\d+)\s+kB/.exec(read(`/proc/${p}/status`))?.[1] ?? 0);
  return total;
}

/** CPU seconds (user + system) used so far by the tree's processes. */
export function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    // Fields after the command name (which may hold spaces); utime and stime are the 12th and 13th of them.
    const fields = read(`/proc/${p}/stat`).split(') ').at(1)?.split(' ') ?? [];
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return ticks / CLOCK_TICKS;
}

/** Sends a signal to every process of the tree, deepest first (SIGSTOP freezes the sandbox, SIGCONT resumes it). */
export function signalTree(pid: number, signal: NodeJS.Signals): void {
  for (const p of processTree(pid).reverse()) {
    try {
      process.kill(p, signal);
    } catch {
      // already gone
    }
  }
}

function read(path: string): string;
function read(path: string, list: true): string[];
function read(path: string, list?: true): string | string[] {
  try {
    return list ? readdirSync(path) : readFileSync(path, 'utf8');
  } catch {
    return list ? [] : '';
  }
}
