import { Redis, type RedisOptions } from 'ioredis';
import { dependencyUnavailable, registerOutageClassifier } from '#errors';
import { getProcessLogger } from '#logging';
import { clientStates, trackClient, type DependencyState } from '#metrics';
import { Backoff } from '#retry';

/** Where a Redis client stands, for readiness: serving, away and trying to come back, or closed by its owner. */
export type RedisState = DependencyState;

/** The state of every Redis client this process opened (for readiness); empty when it uses none. */
export function redisStates(): Array<{ purpose: string; state: RedisState }> {
  return clientStates('Redis');
}

/** Redis clients log through the process's logger (read at each line: it is set once at boot, maybe after them). */
const warn = (fields: object, msg: string) => getProcessLogger().warn(fields, msg);

/**
 * A Redis client that outlives Redis outages: it never stops reconnecting (capped exponential backoff with
 * jitter), logs every loss and return of the connection, and — once it has been connected — fails a command at
 * once while Redis is away instead of queueing it: a queued write would be applied after its caller had been told
 * it failed. A command in flight when the connection drops fails too (it is not resent on reconnect), for the
 * same reason. `purpose` names the client in logs and readiness.
 */
export function createRedis(url: string, purpose: string, options: RedisOptions = {}): Redis {
  const backoff = new Backoff({ baseMs: 100, maxMs: 2_000 });
  const client = new Redis(url, {
    // Never null: the client is never closed for good by the library, only by its owner (quit/disconnect).
    retryStrategy: () => backoff.next(),
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    ...options,
  });
  // A duplicate (e.g. a connection of its own for WATCH) starts with a queue again: it has not connected yet.
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override?: Partial<RedisOptions>) => duplicate({ enableOfflineQueue: true, ...override });
  const watched = trackClient('Redis', purpose);
  let down = 0;
  let lastError: string | undefined;
  client.on('ready', () => {
    // From now on a command sent while disconnected is refused at once (the boot-time queue is no longer needed).
    client.options.enableOfflineQueue = false;
    if (watched.state === 'reconnecting' && down > 0)
      warn({ redis: purpose, downMs: Date.now() - down }, 'Redis reconnected');
    watched.state = 'connected';
    backoff.reset();
    down = 0;
  });
  // 'reconnecting' (not 'close'): a close asked for by the owner (quit) ends without reconnecting and is not an outage.
  client.on('reconnecting', () => {
    if (watched.state !== 'connected') return;
    watched.state = 'reconnecting';
    down = Date.now();
    warn({ redis: purpose, err: lastError }, 'Redis disconnected; reconnecting');
  });
  client.on('error', (err: Error) => {
    // ioredis emits an error per failed attempt; log the first of a run, not every retry.
    if (String(err) !== lastError) warn({ redis: purpose, err: String(err) }, 'Redis connection error');
    lastError = String(err);
  });
  client.on('end', () => {
    watched.state = 'closed';
    watched.untrack();
  });
  return client;
}

/** True for the errors ioredis gives a command refused or cut off by a lost connection. */
export function isRedisConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    /Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|EPIPE/.test(err.message)
  );
}

registerOutageClassifier((err, subject) =>
  isRedisConnectionError(err) ? dependencyUnavailable('Redis', `serve ${subject}`) : undefined,
);
