import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ErrorCode } from '#contracts';
import { pollUntil, startOwnNats, type OwnServer } from '#testing';
import { NatsKvStore } from '#bus';
import {
  IDEMPOTENCY_TTL_MS,
  KvIdempotencyStore,
  LEASE_RENEW_MS,
  RESERVATION_LEASE_MS,
  type IdempotencyRecord,
} from './idempotency.store.js';

const answer = (fingerprint: string): IdempotencyRecord => ({
  fingerprint,
  reservedAt: Date.now(),
  status: 201,
  body: { id: 'mem_1' },
});

/**
 * The distributed Idempotency-Key store on a NATS server of the test's own, which the test stops and starts: what a
 * client retrying with its key is told when the gateway's release or answer could not reach the bucket.
 */
describe(`${KvIdempotencyStore.name} on NATS KV when the bucket is out of reach (own NATS server)`, () => {
  let dir: string;
  let nats: OwnServer;
  const connections: NatsConnection[] = [];
  let bucket = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-idem-'));
    nats = await startOwnNats(join(dir, 'nats'));
  }, 60_000);

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A gateway's store on its own connection (reconnecting for ever, like the bus's); background retries as given. */
  async function gatewayStore(
    name: string,
    retryFirstMs: number,
    url = nats.url,
    budgetMs = 2_500,
    lease = { leaseMs: RESERVATION_LEASE_MS, renewMs: LEASE_RENEW_MS },
  ) {
    const nc = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    connections.push(nc);
    let connected = true;
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') connected = false;
        if (s.type === 'reconnect') connected = true;
      }
    })();
    const kv = new NatsKvStore(nc, name, { ttlMs: IDEMPOTENCY_TTL_MS, timeoutMs: budgetMs });
    const store = new KvIdempotencyStore(
      kv,
      () => connected,
      () => undefined,
      { budgetMs, retryFirstMs, ...lease },
    );
    return { store, connected: () => connected, nc };
  }

  const outage = async (during: () => Promise<void>, stores: Array<{ connected: () => boolean }>) => {
    await nats.stop();
    await pollUntil(() => stores.every((s) => !s.connected()), 10_000, 'the stores to see NATS gone');
    await during();
    await nats.start();
    await pollUntil(() => stores.every((s) => s.connected()), 20_000, 'the stores to reconnect');
  };

  it('a retry takes over the reservation its gateway left while the bucket was away, not "still running"', async () => {
    const name = `IDEM_TEST_${bucket++}`;
    // Background writes that would not land within the test: only the gateway's own knowledge can answer. Leases
    // longer than the test: the given-up reservation does not run out meanwhile.
    const long = { leaseMs: 120_000, renewMs: 30_000 };
    const a = await gatewayStore(name, 600_000, nats.url, 2_500, long);
    const b = await gatewayStore(name, 600_000, nats.url, 2_500, long);
    expect(await a.store.reserve('k1', 'body')).toEqual({ kind: 'new' });
    await outage(async () => {
      await expect(a.store.release('k1')).rejects.toThrow();
      // While NATS is away a key cannot be checked: a fast 503, not a wait.
      await expect(a.store.reserve('k1', 'body')).rejects.toMatchObject({ code: ErrorCode.ServiceUnavailable });
    }, [a, b]);
    // Another gateway cannot know the first was given up: for it the key is still running (until its lease runs out).
    expect(await b.store.reserve('k1', 'body')).toMatchObject({ kind: 'in-progress' });
    // The gateway that gave it up takes it over for the retry: it runs once more, and holds the key again.
    expect(await a.store.reserve('k1', 'body')).toEqual({ kind: 'new' });
    expect(await b.store.reserve('k1', 'body')).toMatchObject({ kind: 'in-progress' });
    await a.store.complete('k1', answer('body'));
    expect(await b.store.reserve('k1', 'body')).toMatchObject({ kind: 'replay', status: 201, body: { id: 'mem_1' } });
  }, 60_000);

  it('an answer the bucket missed is replayed by its gateway, NATS away or back, never to another body', async () => {
    const name = `IDEM_TEST_${bucket++}`;
    const a = await gatewayStore(name, 600_000);
    expect(await a.store.reserve('k2', 'body')).toEqual({ kind: 'new' });
    await outage(async () => {
      await expect(a.store.complete('k2', answer('body'))).rejects.toThrow();
      expect(await a.store.reserve('k2', 'body')).toMatchObject({ kind: 'replay', body: { id: 'mem_1' } });
      expect(await a.store.reserve('k2', 'another body')).toEqual({ kind: 'mismatch' });
    }, [a]);
    expect(await a.store.reserve('k2', 'body')).toMatchObject({ kind: 'replay', body: { id: 'mem_1' } });
  }, 60_000);

  it('once NATS is back, the answer and the release land in the bucket, so every gateway sees them', async () => {
    const name = `IDEM_TEST_${bucket++}`;
    const a = await gatewayStore(name, 100);
    const b = await gatewayStore(name, 100);
    expect(await a.store.reserve('answered', 'body')).toEqual({ kind: 'new' });
    expect(await a.store.reserve('failed', 'body')).toEqual({ kind: 'new' });
    await outage(async () => {
      await expect(a.store.complete('answered', answer('body'))).rejects.toThrow();
      await expect(a.store.release('failed')).rejects.toThrow();
    }, [a, b]);
    await pollUntil(
      async () => (await b.store.reserve('answered', 'body')).kind === 'replay',
      20_000,
      'the answer to land',
    );
    // The release landed: the key is free, so another gateway runs the retry.
    await pollUntil(
      async () => (await b.store.reserve('failed', 'body')).kind === 'new',
      20_000,
      'the release to land',
    );
  }, 60_000);

  it("a reservation is its live gateway's while the request runs; a dead gateway's is taken at lease end", async () => {
    const name = `IDEM_TEST_${bucket++}`;
    const lease = { leaseMs: 1_000, renewMs: 250 };
    const a = await gatewayStore(name, 600_000, nats.url, 2_500, lease);
    const b = await gatewayStore(name, 600_000, nats.url, 2_500, lease);
    expect(await a.store.reserve('live', 'body')).toEqual({ kind: 'new' });
    expect(await a.store.reserve('dying', 'body')).toEqual({ kind: 'new' });
    // Three leases long: the live owner renews, so the key stays "still running", each time with a Retry-After.
    for (let i = 0; i < 6; i++) {
      expect(await b.store.reserve('live', 'body')).toEqual({ kind: 'in-progress', retryAfterSeconds: 1 });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // The owner dies (its connection gone, as with kill -9): its lease is no longer renewed and runs out.
    await a.nc.close();
    const died = Date.now();
    expect(await b.store.reserve('dying', 'body')).toMatchObject({ kind: 'in-progress', retryAfterSeconds: 1 });
    await pollUntil(
      async () => (await b.store.reserve('dying', 'body')).kind === 'new',
      5_000,
      'the dead reservation taken over',
    );
    expect(Date.now() - died).toBeLessThan(lease.leaseMs + 1_500);
    await b.store.complete('dying', answer('body'));
    expect(await b.store.reserve('dying', 'body')).toMatchObject({ kind: 'replay', status: 201 });
  }, 60_000);

  it('a bucket that does not answer is a 503 within the budget, not a request waiting out every timeout', async () => {
    // A broker with no JetStream and a silent responder on its API: the bucket's requests are taken and never answered,
    // as while JetStream recovers its streams after a restart.
    const plain = await startOwnNats(join(dir, 'plain'), { jetstream: false });
    try {
      const silent = await connect({ servers: plain.url });
      connections.push(silent);
      silent.subscribe('$JS.API.>', { callback: () => undefined });
      await silent.flush();
      const a = await gatewayStore('IDEM_SILENT', 600_000, plain.url, 500);
      const started = Date.now();
      await expect(a.store.reserve('k', 'body')).rejects.toMatchObject({ code: ErrorCode.ServiceUnavailable });
      // Far below one JetStream request's default timeout (5 s), let alone the several a reservation may make.
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await plain.stop();
    }
  }, 60_000);
});
