import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { agentStoreContract, describeWithNats, testServers } from '#testing';
import { NatsKvAgentStore } from './nats-kv-agent.store.js';

const describeNats = await describeWithNats();

describeNats(NatsKvAgentStore.name, () => {
  let nc: NatsConnection;
  beforeAll(async () => (nc = await connect({ servers: testServers.natsUrl })));
  afterAll(() => nc?.close());
  const destroy = async (bucket: string) =>
    void (await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined));

  agentStoreContract(async () => {
    const bucket = `agents-test-${randomUUID().slice(0, 8)}`;
    return {
      store: new NatsKvAgentStore(nc, bucket),
      dispose: () => destroy(bucket),
    };
  });

  it('should keep tenants whose names share a prefix or hold dots and slashes apart', async () => {
    const bucket = `agents-test-${randomUUID().slice(0, 8)}`;
    const store = new NatsKvAgentStore(nc, bucket);
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
});
