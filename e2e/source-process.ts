import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repo, stop } from './process-harness.js';

export interface SourceProcess {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves when the output (from now on, or from the start) matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGKILL: no drain, no goodbye, as a crash or an OOM kill. */
  kill(): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs a TypeScript entry point of this repository as its own process, from source (no build needed): the
 * swc loader compiles it as jest does. For tests that must kill a process, not just close it.
 */
export function launchSource(entry: string, env: Record<string, string>): SourceProcess {
  const child = spawn(
    process.execPath,
    ['--import', join(repo, 'e2e/source-loader.mjs'), '--conditions=alfred-source', join(repo, entry)],
    {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (!match) return;
          done();
          resolve(match);
        };
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${entry}: no ${pattern} within ${timeoutMs} ms:\n${output.slice(-4000)}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then((code) => {
          if (!listeners.has(check)) return;
          done();
          reject(new Error(`${entry} exited with ${code}:\n${output.slice(-4000)}`));
        });
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: () => stop(child),
  };
}
