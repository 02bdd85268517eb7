import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './load.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = 7;
/** The bound: a second `npm start` with nothing changed reaches /health within 1.5x of starting main.js. */
const BOUND = 1.5;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Milliseconds from spawning `command` until its /health answers at all (200 or 503), then stops it. */
async function timeToHealth(command: string, args: readonly string[]): Promise<number> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-startup-'));
  const env = {
    ...process.env,
    ALFRED_API_PORT: String(port),
    ALFRED_DATA_DIR: dataDir,
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'warn',
  };
  const started = performance.now();
  // Its own process group: npm's children stop with it.
  const child = spawn(command, args, { cwd: ROOT, env, stdio: 'ignore', detached: true });
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode} before /health answered`);
      const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (answered === 200 || answered === 503) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x);

/**
 * Start-up to a first /health answer: `node dist/services/main.js` and `npm start` with nothing changed (its build
 * step finds everything up to date), alternated in one sitting so both see the same machine load.
 */
export async function startupBench(): Promise<BenchRow[]> {
  if (spawnSync('npm', ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.log('startup: npm not on PATH, skipped');
    return [];
  }
  // Everything built once first, so every `npm start` below measures the nothing-changed case.
  if (spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' }).status !== 0)
    throw new Error('build failed');
  const direct: number[] = [];
  const npmStart: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    direct.push(await timeToHealth(process.execPath, ['--disable-sigusr1', 'dist/services/main.js']));
    npmStart.push(await timeToHealth('npm', ['start']));
  }
  const ratio = Math.round((median(npmStart) / median(direct)) * 100) / 100;
  const row = (name: string, xs: number[], note?: string): BenchRow => ({
    section: 'startup',
    name,
    mode: 'embedded',
    connections: 1,
    rps: 0,
    p50: round(median(xs)),
    p99: round(Math.max(...xs)),
    errors: 0,
    ...(note ? { note } : {}),
    metrics: {
      runs: xs.length,
      min_ms: round(Math.min(...xs)),
      median_ms: round(median(xs)),
      max_ms: round(Math.max(...xs)),
    },
  });
  return [
    row('node dist/services/main.js to /health', direct),
    row(
      'npm start (nothing changed) to /health',
      npmStart,
      `median ${ratio}x the direct start (bound ${BOUND}x): ${ratio <= BOUND ? 'within' : 'OVER'}`,
    ),
  ];
}
