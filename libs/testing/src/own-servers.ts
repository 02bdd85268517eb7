import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

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

async function ownServer(spec: ServerSpec, chosenPort?: number): Promise<OwnServer> {
  const port = chosenPort ?? (await freePort());
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

/**
 * nats-server with JetStream (unless `jetstream: false`: a plain broker), its store in `storeDir`; with `monitorPort`,
 * its HTTP monitoring endpoint (/varz, /jsz, /healthz) on that port of the same loopback address.
 */
export function startOwnNats(
  storeDir: string,
  { jetstream = true, monitorPort }: { jetstream?: boolean; monitorPort?: number } = {},
): Promise<OwnServer> {
  const optional = [
    ...(jetstream ? ['-js', '-sd', storeDir] : []),
    ...(monitorPort ? ['-m', String(monitorPort)] : []),
  ];
  return ownServer({
    command: 'nats-server',
    args: (port) => ['-a', '127.0.0.1', '-p', String(port), ...optional],
    ready: /Server is ready/,
    url: (port) => `nats://127.0.0.1:${port}`,
  });
}

/** redis-server with the append-only file (fsync every write) in `dir`, no RDB snapshots. */
export function startOwnRedis(dir: string): Promise<OwnServer> {
  return ownServer({
    command: 'redis-server',
    args: (port) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    ready: /Ready to accept connections/,
    url: (port) => `redis://127.0.0.1:${port}`,
  });
}

/** A JetStream cluster of the test's own: nats-server processes on loopback, clustered over routes. */
export interface OwnNatsCluster {
  /** Node i: stop (SIGTERM or kill -9) and start it again on its port and store, like any OwnServer. */
  readonly nodes: readonly OwnServer[];
  /** Every node's client URL, comma-separated: what NATS_URL gets. */
  readonly url: string;
  /** server_name of node i (`n0`, `n1`, ...), as JetStream reports a stream's leader. */
  readonly names: readonly string[];
  /** Stops every node still running. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/**
 * `size` nats-server processes with JetStream, each on a free loopback client port with its own store under `dir`,
 * routed to each other on free loopback cluster ports (one config file per node). Resolves once every node is ready
 * and the cluster has elected its JetStream metadata leader, so streams with `size` replicas can be created.
 */
export async function startOwnNatsCluster(dir: string, size = 3): Promise<OwnNatsCluster> {
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const names = ports.map((_, i) => `n${i}`);
  const routes = routePorts.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ');
  const configs = await Promise.all(
    names.map(async (name, i) => {
      const store = join(dir, name);
      await mkdir(store, { recursive: true });
      const file = join(dir, `${name}.conf`);
      await writeFile(
        file,
        [
          `server_name: ${name}`,
          `listen: "127.0.0.1:${ports[i]}"`,
          `jetstream { store_dir: ${JSON.stringify(store)} }`,
          `cluster { name: alfred-test, listen: "127.0.0.1:${routePorts[i]}", routes: [${routes}] }`,
          '',
        ].join('\n'),
      );
      return file;
    }),
  );
  const nodes = await Promise.all(
    configs.map((file, i) =>
      ownServer(
        {
          command: 'nats-server',
          args: () => ['-c', file],
          ready: /Server is ready/,
          url: (port) => `nats://127.0.0.1:${port}`,
        },
        ports[i],
      ),
    ),
  );
  const cluster: OwnNatsCluster = {
    nodes,
    names,
    url: nodes.map((n) => n.url).join(','),
    async stop(signal = 'SIGTERM') {
      await Promise.all(nodes.map((n) => n.stop(signal)));
    },
  };
  const deadline = Date.now() + 30_000;
  while (
    !nodes.some((n) =>
      /JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/.test(n.output()),
    )
  ) {
    if (Date.now() > deadline) {
      await cluster.stop('SIGKILL');
      throw new Error(`the NATS cluster elected no JetStream leader:\n${nodes.map((n) => n.output()).join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return cluster;
}
