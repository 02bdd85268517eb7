import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsKvStore } from '#bus';
import { agentStoreContract, describeWithNats, testServers } from '#testing';
import { KvAgentStore } from './kv-agent.store.js';

const describeNats = await describeWithNats();

describeNats(`${KvAgentStore.name} on NATS KV`, () => {
  let nc: NatsConnection;
  beforeAll(async () => (nc = await connect({ servers: testServers.natsUrl })));
  afterAll(() => nc?.close());
  const destroy = async (bucket: string) =>
    void (await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined));

  agentStoreContract(async () => {
    const bucket = `agents-test-${randomUUID().slice(0, 8)}`;
    return { store: new KvAgentStore(new NatsKvStore(nc, bucket)), dispose: () => destroy(bucket) };
  });

  it('should keep tenants whose names share a prefix or hold dots and slashes apart', async () => {
    const bucket = `agents-test-${randomUUID().slice(0, 8)}`;
    const store = new KvAgentStore(new NatsKvStore(nc, bucket));
    const record = (name: string) => ({
      name,
      persona: '',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    try {
      await store.create('acme', record('a'));
      await store.create('acme.corp/x', record('b'));
      await store.create('acm', record('c'));
      expect((await store.list('acme')).map((r) => r.name)).toEqual(['a']);
      expect((await store.list('acme.corp/x')).map((r) => r.name)).toEqual(['b']);
      expect(await store.get('acm', 'a')).toBeUndefined();
    } finally {
      await destroy(bucket);
    }
  });

  it('should read the records an earlier version wrote to the bucket (same keys, same JSON)', async () => {
    const bucket = `agents-test-${randomUUID().slice(0, 8)}`;
    const kv = await new Kvm(nc).create(bucket, { history: 1 });
    const record = {
      name: 'scout',
      persona: 'p',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    try {
      await kv.put(`${Buffer.from('acme', 'utf8').toString('base64url')}.scout`, JSON.stringify(record));
      expect(await new KvAgentStore(new NatsKvStore(nc, bucket)).get('acme', 'scout')).toEqual(record);
    } finally {
      await destroy(bucket);
    }
  });
});
