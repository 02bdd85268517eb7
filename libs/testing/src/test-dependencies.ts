import { existsSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import type { ContainerRuntimeClient, StartedTestContainer } from 'testcontainers';

// Jest loads this file as the int and e2e projects' globalSetup with Node's own resolver (its moduleNameMapper does not
// apply there), so it imports only node: modules and packages; reachability.ts and the suites import from it.

/** Where integration tests find their servers when the environment does not say. */
export const DEFAULT_URLS = { nats: 'nats://127.0.0.1:4222', redis: 'redis://127.0.0.1:6379' } as const;

/** Why the Qdrant suites do not run, handed from the run's setup to the suites' workers (they inherit process.env). */
export const QDRANT_SKIP_ENV = 'ALFRED_TEST_QDRANT_SKIP_REASON';

/** Why Qdrant suites skip in this run (for their printed reason). */
export function qdrantSkipReason(): string {
  return process.env[QDRANT_SKIP_ENV] ?? 'QDRANT_URL is unset and no Qdrant container was started for this run';
}

function hostPort(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: u.port ? Number(u.port) : defaultPort };
}

/** True when a TCP connection to the URL's host and port opens within the timeout. */
export function tcpReachable(url: string, defaultPort: number, timeoutMs = 500): Promise<boolean> {
  const { host, port } = hostPort(url, defaultPort);
  return new Promise((resolve) => {
    const socket = netConnect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The images integration suites run their dependencies from, through testcontainers: the ones docker-compose.yml
 * deploys (e2e/compose.e2e-spec.ts keeps them equal), each replaceable with ALFRED_TEST_<NAME>_IMAGE.
 */
export const TEST_IMAGES = {
  qdrant: process.env.ALFRED_TEST_QDRANT_IMAGE ?? 'qdrant/qdrant:v1.15.0',
  nats: process.env.ALFRED_TEST_NATS_IMAGE ?? 'nats:2.11-alpine',
  redis: process.env.ALFRED_TEST_REDIS_IMAGE ?? 'redis:7-alpine',
} as const;

/** What docker/local-images.sh builds from Debian's packages, used where the official image cannot be pulled. */
const LOCAL_IMAGES: Partial<Record<Dependency, string>> = { nats: 'alfred-local/nats', redis: 'alfred-local/redis' };
/** The private engine docker/engine.sh runs, tried when DOCKER_HOST is unset and the default socket is absent. */
const PROJECT_ENGINE = '/run/alfred-docker/docker.sock';
const PULL_TIMEOUT_MS = 120_000;

export type Dependency = keyof typeof TEST_IMAGES;

/** A dependency running in a container, at the URL its clients take. */
export interface ContainerDependency {
  readonly url: string;
  readonly image: string;
  stop(): Promise<void>;
}

/** The engine's client, or why none answers. Sets DOCKER_HOST to the project's engine when that is the one there. */
export async function dockerEngine(): Promise<{ client: ContainerRuntimeClient } | { reason: string }> {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock') && existsSync(PROJECT_ENGINE)) {
    process.env.DOCKER_HOST = `unix://${PROJECT_ENGINE}`;
  }
  // That engine runs on this machine, so its published ports are on loopback; testcontainers would otherwise take a
  // bridge address wherever /.dockerenv exists (as on this project's VMs).
  if (process.env.DOCKER_HOST === `unix://${PROJECT_ENGINE}`) process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    return { client: await getContainerRuntimeClient() };
  } catch (err) {
    return { reason: `no Docker engine answers (${firstLine(err)})` };
  }
}

/** The image to run `dependency` from: the official one if present or pullable, else the locally built one. */
export async function imageFor(
  client: ContainerRuntimeClient,
  dependency: Dependency,
): Promise<{ image: string } | { reason: string }> {
  const { ImageName } = await import('testcontainers');
  const official = TEST_IMAGES[dependency];
  if (await client.image.exists(ImageName.fromString(official))) return { image: official };
  const pulled = await withTimeout(client.image.pull(ImageName.fromString(official)), PULL_TIMEOUT_MS).then(
    () => undefined,
    (err: unknown) => firstLine(err),
  );
  if (pulled === undefined) return { image: official };
  const local = LOCAL_IMAGES[dependency];
  if (local && (await client.image.exists(ImageName.fromString(local)))) return { image: local };
  const unbuilt = local ? ` and ${local} (docker/local-images.sh) is not built` : '';
  return { reason: `${official} cannot be pulled (${pulled})${unbuilt}` };
}

/**
 * Keeps testcontainers' reaper (Ryuk), which removes a crashed run's containers, when its image can be had; otherwise
 * turns it off (TESTCONTAINERS_RYUK_DISABLED), and the run's teardown is what stops the containers.
 */
export async function reaperOrNot(client: ContainerRuntimeClient): Promise<string | undefined> {
  if (process.env.TESTCONTAINERS_RYUK_DISABLED !== undefined) return undefined;
  const { ImageName } = await import('testcontainers');
  const { getReaperImage } = (await import('testcontainers/build/reaper/reaper.js')) as { getReaperImage(): string };
  const ryuk = ImageName.fromString(getReaperImage());
  if (await client.image.exists(ryuk)) return undefined;
  const pulled = await withTimeout(client.image.pull(ryuk), PULL_TIMEOUT_MS).then(
    () => true,
    () => false,
  );
  if (pulled) return undefined;
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  return `Ryuk (${ryuk.string}) cannot be pulled: it is off, and the run's teardown stops the containers`;
}

/** Starts `dependency` from `image` and waits until it serves. */
export async function startDependency(dependency: Dependency, image: string): Promise<ContainerDependency> {
  const { GenericContainer, Wait } = await import('testcontainers');
  if (dependency === 'qdrant') {
    const { QdrantContainer } = await import('@testcontainers/qdrant');
    const started = await new QdrantContainer(image).withStartupTimeout(120_000).start();
    return running(image, `http://${started.getRestHostAddress()}`, started);
  }
  // The same command for the official image and Debian's: each has nats-server / redis-server on its PATH.
  const spec =
    dependency === 'nats'
      ? { port: 4222, scheme: 'nats', ready: /Server is ready/, command: ['nats-server', '-js', '-sd', '/tmp/js'] }
      : {
          port: 6379,
          scheme: 'redis',
          ready: /Ready to accept connections/,
          command: ['redis-server', '--protected-mode', 'no', '--save', '', '--appendonly', 'no'],
        };
  const started = await new GenericContainer(image)
    .withEntrypoint([spec.command[0]!])
    .withCommand(spec.command.slice(1))
    .withExposedPorts(spec.port)
    .withWaitStrategy(Wait.forLogMessage(spec.ready))
    .withStartupTimeout(60_000)
    .start();
  return running(image, `${spec.scheme}://${started.getHost()}:${started.getMappedPort(spec.port)}`, started);
}

function running(image: string, url: string, container: Pick<StartedTestContainer, 'stop'>): ContainerDependency {
  return { image, url, stop: async () => void (await container.stop()) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

const ENV: Record<Dependency, string> = { qdrant: 'QDRANT_URL', nats: 'NATS_URL', redis: 'REDIS_URL' };

/**
 * The integration dependencies of one `npm test` run (jest's globalSetup of the int and e2e projects): Qdrant from a
 * container unless QDRANT_URL is set; NATS and Redis from containers only when nothing answers at NATS_URL/REDIS_URL.
 * Their URLs go into the environment the suites read (testServers); what cannot start is said once, with the reason.
 * Without an engine or an image, the suites skip as before (NATS and Redis fail instead under CI=true).
 */
export async function startTestDependencies(log: (line: string) => void): Promise<ContainerDependency[]> {
  const wanted: Dependency[] = [];
  if (!process.env.QDRANT_URL) wanted.push('qdrant');
  if (!(await tcpReachable(process.env.NATS_URL ?? DEFAULT_URLS.nats, 4222))) wanted.push('nats');
  if (!(await tcpReachable(process.env.REDIS_URL ?? DEFAULT_URLS.redis, 6379))) wanted.push('redis');
  if (wanted.length === 0) return [];
  const engine = await dockerEngine();
  if ('reason' in engine) {
    skip(wanted, engine.reason, log);
    return [];
  }
  const images = await Promise.all(wanted.map(async (d) => [d, await imageFor(engine.client, d)] as const));
  const runnable = images.filter((entry): entry is readonly [Dependency, { image: string }] => 'image' in entry[1]);
  for (const [dependency, result] of images) if ('reason' in result) skip([dependency], result.reason, log);
  if (runnable.length === 0) return [];
  const reaper = await reaperOrNot(engine.client);
  if (reaper) log(reaper);
  const started = await Promise.allSettled(runnable.map(([d, found]) => startDependency(d, found.image)));
  const running: ContainerDependency[] = [];
  started.forEach((result, i) => {
    const dependency = runnable[i]![0];
    if (result.status === 'rejected') {
      skip([dependency], `its container did not start (${firstLine(result.reason)})`, log);
      return;
    }
    running.push(result.value);
    process.env[ENV[dependency]] = result.value.url;
    log(`${dependency}: ${result.value.image} at ${result.value.url}`);
  });
  return running;
}

function skip(dependencies: readonly Dependency[], reason: string, log: (line: string) => void): void {
  for (const dependency of dependencies) {
    if (dependency === 'qdrant') process.env[QDRANT_SKIP_ENV] = reason;
    log(`${dependency}: not started: ${reason}`);
  }
}

/**
 * jest's globalSetup for the int and e2e projects (jest.config.js). Jest keeps this process's globals for the teardown
 * (jest-dependencies.teardown.ts), and the workers it starts next inherit the URLs in process.env.
 * @public (named in jest.config.js)
 */
export default async function setup(): Promise<void> {
  const log = (line: string) => process.stdout.write(`[test containers] ${line}\n`);
  (globalThis as { alfredTestContainers?: unknown }).alfredTestContainers = await startTestDependencies(log);
}
