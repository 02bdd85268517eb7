import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const repo = new URL('..', import.meta.url).pathname;

export interface Launched {
  readonly child: ChildProcess;
  readonly match: RegExpMatchArray;
  output(): string;
}

/** Starts `command args` in the repo; resolves once the output matches `ready`, rejects when it exits first. */
export function launchCommand(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<Launched> {
  const child = spawn(command, args, {
    cwd: repo,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} not ready:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

/** Starts a built entry point as its own process; resolves once a log line matches `ready`. */
export function launch(entry: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<Launched> {
  return launchCommand(process.execPath, [join(repo, entry)], env, ready);
}

/** SIGTERM, then the exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}
