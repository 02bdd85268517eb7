import { join } from 'node:path';
import { DEFAULT_URLS, qdrantSkipReason, tcpReachable } from './test-dependencies.js';

export { qdrantSkipReason, tcpReachable } from './test-dependencies.js';

/**
 * Where integration tests find their servers, and whether they must be there. Read when a suite loads: after the
 * run's setup (test-dependencies.ts) has put the URLs of any dependency it started in a container into process.env.
 */
export const testServers = {
  natsUrl: process.env.NATS_URL ?? DEFAULT_URLS.nats,
  redisUrl: process.env.REDIS_URL ?? DEFAULT_URLS.redis,
  qdrantUrl: process.env.QDRANT_URL,
  /** In CI every server a test needs must be there: a missing one fails instead of skipping (Qdrant excepted). */
  required: process.env.CI === 'true',
};

async function describeIfReachable(name: string, url: string | undefined, defaultPort: number) {
  const ok = url !== undefined && (await tcpReachable(url, defaultPort, 1000));
  if (ok) return describe;
  if (testServers.required && name !== 'QDRANT') throw new Error(`${name} is required in CI but ${url} is unreachable`);
  const why = name === 'QDRANT' && url === undefined ? qdrantSkipReason() : `not reachable at ${url ?? '(unset)'}`;
  // Written, not console.warn: jest drops the console output of a suite whose tests are all skipped.
  const how = `a Docker engine (README "The two commands"), or ${name}_URL`;
  process.stderr.write(`[skip] ${name} tests: ${why}. To run them: ${how}\n`);
  return describe.skip;
}

/**
 * `const describeNats = await describeWithNats();` at a test module's top level: jest's describe when
 * the server answers, describe.skip (with a printed reason) when it does not, an error in CI.
 */
export const describeWithNats = () => describeIfReachable('NATS', testServers.natsUrl, 4222);
export const describeWithRedis = () => describeIfReachable('REDIS', testServers.redisUrl, 6379);
/** Qdrant: the run's container (test-dependencies.ts) or QDRANT_URL; skipped with the reason without either. */
export const describeWithQdrant = () => describeIfReachable('QDRANT', testServers.qdrantUrl, 6333);

/**
 * The public skills kept beside the repository for compatibility tests: ALFRED_SKILLS_CORPUS_DIR, else
 * `../shared/skills-corpus` next to the checkout (.ci/run sets the variable for a clone elsewhere).
 */
export function skillsCorpusDir(repoRoot: string): string {
  return process.env.ALFRED_SKILLS_CORPUS_DIR ?? join(repoRoot, '..', 'shared', 'skills-corpus');
}
