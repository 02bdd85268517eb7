import { connect as netConnect } from 'node:net';

/** Where integration tests find their servers, and whether they must be there. */
export const testServers = {
  natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  qdrantUrl: process.env.QDRANT_URL,
  /** In CI every server a test needs must be there: a missing one fails instead of skipping. */
  required: process.env.CI === 'true',
};

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

async function describeIfReachable(name: string, url: string | undefined, defaultPort: number) {
  const ok = url !== undefined && (await tcpReachable(url, defaultPort, 1000));
  if (ok) return describe;
  if (testServers.required && name !== 'QDRANT') throw new Error(`${name} is required in CI but ${url} is unreachable`);
  console.warn(`[skip] ${name} tests: not reachable at ${url ?? '(unset)'}; set ${name}_URL to run them`);
  return describe.skip;
}

/**
 * `const describeNats = await describeWithNats();` at a test module's top level: jest's describe when
 * the server answers, describe.skip (with a printed reason) when it does not, an error in CI.
 */
export const describeWithNats = () => describeIfReachable('NATS', testServers.natsUrl, 4222);
export const describeWithRedis = () => describeIfReachable('REDIS', testServers.redisUrl, 6379);
/** Qdrant cannot run on these machines: its tests run only when QDRANT_URL is set. */
export const describeWithQdrant = () => describeIfReachable('QDRANT', testServers.qdrantUrl, 6333);
