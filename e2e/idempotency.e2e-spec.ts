import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { describeWithNats, testServers } from '#testing';
import { client, startSystem, type Client, type Mode, type TestSystem } from './harness.js';

const describeNats = await describeWithNats();

/** Idempotency-Key on creating endpoints, the same on both buses (NATS: a KV bucket shared by gateway instances). */
function idempotencySuite(mode: Mode) {
  let sys: TestSystem;
  let api: Client;
  beforeAll(async () => {
    sys = await startSystem(mode);
    api = client(sys.url);
  }, 60_000);
  afterAll(() => sys?.stop());

  const count = async () => (await api.get('/memories?limit=1')).body.pagination.total as number;

  it('should answer a retry with the same key and body with the first answer, creating nothing twice', async () => {
    const key = randomUUID();
    const before = await count();
    const first = await api.post('/memories', { content: 'once only' }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const again = await api.post('/memories', { content: 'once only' }, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await count()).toBe(before + 1);
  });

  it('should refuse the same key with another body with 409 and change nothing', async () => {
    const key = randomUUID();
    expect((await api.post('/memories', { content: 'first body' }, { 'idempotency-key': key })).status).toBe(201);
    const before = await count();
    const other = await api.post('/memories', { content: 'another body' }, { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', details: { header: 'Idempotency-Key' } });
    expect(other.headers.get('retry-after')).toBeNull();
    expect(await count()).toBe(before);
  });

  it('should run concurrent requests with one key once', async () => {
    const key = randomUUID();
    const before = await count();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        api.post('/memories/batch', { memories: [{ content: 'raced' }] }, { 'idempotency-key': key }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(statuses).toContain(201);
    expect(await count()).toBe(before + 1);
    // "Still running" says when to come back; "another body" does not (no retry helps it).
    const conflicts = answers.filter((x) => x.status === 409);
    for (const a of conflicts) expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('should let a key be used again after its request failed, and refuse a malformed key', async () => {
    const key = randomUUID();
    expect((await api.post('/memories', { content: '' }, { 'idempotency-key': key })).status).toBe(400);
    expect((await api.post('/memories', { content: 'now valid' }, { 'idempotency-key': key })).status).toBe(201);
    expect((await api.post('/memories', { content: 'x' }, { 'idempotency-key': 'ä'.repeat(3) })).status).toBe(400);
  });

  it('should keep keys apart per endpoint: a session created with a key used for a memory is its own', async () => {
    const key = randomUUID();
    expect((await api.post('/memories', { content: 'shared key' }, { 'idempotency-key': key })).status).toBe(201);
    const session = await api.post('/sessions', {}, { 'idempotency-key': key });
    expect(session.status).toBe(201);
    expect((await api.post('/sessions', {}, { 'idempotency-key': key })).body.id).toBe(session.body.id);
  });
}

describe('Idempotency-Key (embedded)', () => idempotencySuite('embedded'));

describeNats('Idempotency-Key (NATS)', () => {
  idempotencySuite('nats');
  afterAll(async () => {
    // The KV bucket's stream is named KV_<bucket>, outside the subject-prefix cleanup: remove the test's buckets.
    const nc = await connect({ servers: testServers.natsUrl });
    const kvm = new Kvm(nc);
    for await (const status of kvm.list()) {
      if (/^e2e-.*ALFRED_IDEMPOTENCY$/i.test(status.bucket)) await (await kvm.open(status.bucket)).destroy();
    }
    await nc.close();
  });
});
