import { connect } from '@nats-io/transport-node';
import { jetstreamManager, jetstream } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { dockerEngine, imageFor, reaperOrNot, startDependency, type Dependency } from './test-dependencies.js';

const engine = await dockerEngine();
if ('reason' in engine && process.env.ALFRED_TEST_REQUIRE_ENGINE === 'true') {
  throw new Error(`ALFRED_TEST_REQUIRE_ENGINE: ${engine.reason}`);
}
// Written, not console.warn: jest drops the console output of a suite whose tests are all skipped.
const say = (line: string) => process.stderr.write(`${line}\n`);
if ('reason' in engine) say(`[skip] testcontainers suite: ${engine.reason}. Start Docker or docker/engine.sh's engine`);
const client = 'client' in engine ? engine.client : undefined;
const DEPENDENCIES: Dependency[] = ['nats', 'redis', 'qdrant'];
const resolved = client
  ? await Promise.all(DEPENDENCIES.map(async (d) => [d, await imageFor(client, d)] as const))
  : [];
const images = Object.fromEntries(resolved);
const reaper = client ? await reaperOrNot(client) : undefined;
if (reaper) say(`[testcontainers] ${reaper}`);

/** `it` where `dependency`'s image can be had; skipped with the reason otherwise (no registry and no local build). */
function itWithImage(dependency: Dependency, name: string, fn: (image: string) => Promise<void>) {
  const found = images[dependency] as { image: string } | { reason: string } | undefined;
  if (found && 'image' in found) return it(name, () => fn(found.image), 180_000);
  if (found) say(`[skip] ${name}: ${found.reason}`);
  return it.skip(name, () => undefined);
}

/**
 * The path `npm test` takes to its dependencies (jest-dependencies.setup.ts): each started from its image through
 * testcontainers and used with the project's own clients. docker/compose-e2e.sh runs it on the images it builds.
 */
(client ? describe : describe.skip)('testcontainers dependencies', () => {
  itWithImage('nats', 'should run NATS with JetStream and keep a published message', async (image) => {
    const nats = await startDependency('nats', image);
    try {
      const nc = await connect({ servers: nats.url });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'TESTCONTAINERS', subjects: ['tc.>'] });
      const ack = await jetstream(nc).publish('tc.one', 'kept');
      expect((await jsm.streams.getMessage('TESTCONTAINERS', { seq: ack.seq }))?.string()).toBe('kept');
      await nc.close();
    } finally {
      await nats.stop();
    }
  });

  itWithImage('redis', 'should run Redis and answer commands', async (image) => {
    const redis = await startDependency('redis', image);
    try {
      const r = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await r.connect();
      await r.set('testcontainers', 'kept');
      expect(await r.get('testcontainers')).toBe('kept');
      r.disconnect();
    } finally {
      await redis.stop();
    }
  });

  itWithImage('qdrant', 'should run Qdrant from its official image and serve collections', async (image) => {
    const qdrant = await startDependency('qdrant', image);
    try {
      const { QdrantClient } = await import('@qdrant/js-client-rest');
      const q = new QdrantClient({ url: qdrant.url, checkCompatibility: false });
      await q.createCollection('testcontainers', { vectors: { size: 2, distance: 'Cosine' } });
      expect((await q.getCollections()).collections.map((c) => c.name)).toContain('testcontainers');
    } finally {
      await qdrant.stop();
    }
  });
});
