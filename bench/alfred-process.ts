import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** `npm start` as its own process (its RSS is the platform's alone), on a data folder of the bench's. */
export interface AlfredProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Resident set size now, in MB (from /proc). */
  rssMb(): Promise<number>;
  stop(): Promise<void>;
  /** Milliseconds from spawn to the first /health answering 200. */
  readonly startMs: number;
}

const entry = new URL('../services/main.js', import.meta.url).pathname;

/** One service's own process (`dist/services/<name>/src/main.js`), as a distributed deployment runs it. */
export const serviceEntry = (name: string) => new URL(`../services/${name}/src/main.js`, import.meta.url).pathname;

/**
 * `npm start` (or, with `main`, one service's own entry that serves the API: the gateway's) as its own process, on a
 * data folder of the bench's; resolves once `/health` answers 200.
 */
export async function startAlfredProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  main: string = entry,
): Promise<AlfredProcess> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--disable-sigusr1', main], {
    env: {
      PATH: process.env.PATH,
      ALFRED_DATA_DIR: dataDir,
      ALFRED_API_PORT: String(port),
      ALFRED_EMBEDDER: 'hash',
      ALFRED_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`alfred exited with ${code}: ${stderr}`))),
  );
  await Promise.race([healthy(url), exited]);
  const startMs = Math.round(performance.now() - started);
  return {
    url,
    child,
    startMs,
    rssMb: async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
    },
    stop: () => stopChild(child),
  };
}

/** Starts a service without an API of its own (its readiness shows in the gateway's `/health`). */
export function startServiceProcess(name: string, env: NodeJS.ProcessEnv): { stop(): Promise<void> } {
  const child = spawn(process.execPath, ['--disable-sigusr1', serviceEntry(name)], {
    env: { PATH: process.env.PATH, ALFRED_EMBEDDER: 'hash', ALFRED_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { stop: () => stopChild(child) };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function healthy(url: string): Promise<void> {
  for (;;) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
