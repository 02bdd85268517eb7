import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { describeWithNats, kvStoreContract, testServers } from '#testing';
import { NatsKvStore } from './nats-kv.store.js';

const describeNats = await describeWithNats();

describeNats(NatsKvStore.name, () => {
  let nc: NatsConnection;
  beforeAll(async () => (nc = await connect({ servers: testServers.natsUrl })));
  afterAll(() => nc?.close());

  kvStoreContract(NatsKvStore.name, describe, async (options) => {
    const bucket = `kv-test-${randomUUID().slice(0, 8)}`;
    return {
      store: new NatsKvStore(nc, bucket, options),
      peer: new NatsKvStore(nc, bucket, options),
      cleanup: async () => void (await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined)),
    };
  });
});
