import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A free loopback TCP port (bound once and released; the caller binds it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A broker of a test's own (never the shared 4222/6379 ones): a real nats-server or redis-server on a free loopback
 * port with its own store dir, which the test may stop, kill and start again on the same port and store.
 */
export interface OwnServer {
  readonly url: string;
  readonly port: number;
  /** Stops it: SIGTERM (clean) or SIGKILL (a crash); resolves once the process has exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port and store; resolves once it accepts connections. */
  start(): Promise<void>;
  readonly running: boolean;
  output(): string;
}

interface ServerSpec {
  readonly command: string;
  readonly args: (port: number) => string[];
  readonly ready: RegExp;
  readonly url: (port: number) => string;
}

async function ownServer(spec: ServerSpec): Promise<OwnServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn(spec.command, spec.args(port), { stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      let output = '';
      const timer = setTimeout(() => reject(new Error(`${spec.command} not ready on ${port}:\n${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        log += chunk.toString();
        if (spec.ready.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout!.on('data', onData);
      started.stderr!.on('data', onData);
      started.once('exit', (code) => {
        clearTimeout(timer);
        if (child === started) child = undefined;
        reject(new Error(`${spec.command} exited with ${code}:\n${output}`));
      });
    });
  await start();
  return {
    url: spec.url(port),
    port,
    get running() {
      return child !== undefined;
    },
    output: () => log,
    start,
    stop(signal = 'SIGTERM') {
      const running = child;
      if (!running) return Promise.resolve();
      return new Promise((resolve) => {
        running.once('exit', () => resolve());
        running.kill(signal);
      });
    },
  };
}

/** nats-server with JetStream, its store in `storeDir`. */
export function startOwnNats(storeDir: string): Promise<OwnServer> {
  return ownServer({
    command: 'nats-server',
    args: (port) => ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir],
    ready: /Server is ready/,
    url: (port) => `nats://127.0.0.1:${port}`,
  });
}

/** redis-server with the append-only file (fsync every write) in `dir`, no RDB snapshots. */
export function startOwnRedis(dir: string): Promise<OwnServer> {
  return ownServer({
    command: 'redis-server',
    args: (port) => ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
    ready: /Ready to accept connections/,
    url: (port) => `redis://127.0.0.1:${port}`,
  });
}
