import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { z } from 'zod';
import { event } from '#contracts';
import { startOwnNats, type OwnServer } from '#testing';
import { openKvBucket } from './kv-bucket.js';
import { NatsBus } from './nats.bus.js';
import { queueDef } from './queue.js';

const INSTANCES = 8;
const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined };

/**
 * Instances that create the same stream, bucket or consumer at the same moment (replicas starting together, or an old
 * and a new version of a service during a rolling upgrade) on a fresh NATS server of the test's own: every one of them
 * must end up with it, none with "stream name already in use" or "subjects overlap".
 */
describe('JetStream creation raced by several instances (own NATS server)', () => {
  let dir: string;
  let nats: OwnServer;
  let buses: NatsBus[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-js-create-'));
    nats = await startOwnNats(join(dir, 'nats'));
    buses = await Promise.all(
      Array.from({ length: INSTANCES }, (_, i) =>
        NatsBus.connect({ url: nats.url, name: `racer-${i}`, logger: quiet }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all((buses ?? []).map((b) => b.close(2_000)));
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('should open one bucket for every instance, even when their options differ', async () => {
    // A different TTL per instance: the bucket's stream is "already in use with a different configuration" for losers.
    const opened = await Promise.allSettled(
      buses.map((b, i) => openKvBucket(b.nc, 'RACED_KV', { history: 1, ttl: 60_000 * (i + 1) })),
    );

    expect(
      opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)),
    ).toEqual([]);
    const kvs = opened.map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<typeof openKvBucket>>>).value);
    await kvs[0]!.put('k', 'v');
    expect(new TextDecoder().decode((await kvs[INSTANCES - 1]!.get('k'))!.value)).toBe('v');
  });

  it("should store every instance's events in a stream they all create and widen at once", async () => {
    // Each instance's events need their own subject in the one stream (a rolling upgrade adding an event kind).
    const events = buses.map((_, i) => event(`raced${i}`, 'happened', 'RACED_EVENTS', z.object({ i: z.number() })));
    const published = await Promise.allSettled(
      buses.map((b, i) => b.publish(events[i]!, { i }, { key: 'k', msgId: `raced-${i}` })),
    );

    expect(
      published.filter((p) => p.status === 'rejected').map((p) => String((p as PromiseRejectedResult).reason)),
    ).toEqual([]);
    const info = await (await jetstreamManager(buses[0]!.nc)).streams.info('RACED_EVENTS');
    expect(info.state.messages).toBe(INSTANCES);
  });

  it('should give every instance the work queue and its consumer when all start consuming at once', async () => {
    const defs = buses.map((_, i) =>
      queueDef({
        name: 'raced-jobs',
        stream: 'RACED_JOBS',
        subject: 'raced.jobs',
        payload: z.object({ n: z.number() }),
        ackWaitMs: 10_000 + i * 1_000,
      }),
    );
    const done = new Set<number>();
    const consuming = await Promise.all(
      buses.map((b, i) => b.queue(defs[i]!).consume(async (p) => void done.add(p.n))),
    );

    await buses[0]!.queue(defs[0]!).enqueue({ n: 7 }, { msgId: 'raced-7' });
    const deadline = Date.now() + 10_000;
    while (!done.has(7) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(done.has(7)).toBe(true);
    await Promise.all(consuming.map((c) => c.stop(1_000)));
  });
});
