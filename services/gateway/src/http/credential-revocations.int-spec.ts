import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsKvStore } from '#bus';
import { describeWithNats, testServers } from '#testing';
import { KvCredentialRevocations } from './credential-revocations.js';
import { ScopedCredentials } from './scoped-credential.js';

const describeNats = await describeWithNats();
const SECRET = 's'.repeat(32);
const scope = { tenant: 'acme', agent: 'jarvis', session: 'sess-1', turn: 'turn-1' };

/** Two gateway instances (their own connections, one secret, one revocations bucket): what one revokes, both refuse. */
describeNats(`${KvCredentialRevocations.name} on NATS KV across gateway instances`, () => {
  const bucket = `revocations-test-${randomUUID().slice(0, 8)}`;
  let connections: NatsConnection[];
  let connected = true;
  let a: ScopedCredentials;
  let b: ScopedCredentials;

  beforeAll(async () => {
    connections = await Promise.all([1, 2].map(() => connect({ servers: testServers.natsUrl })));
    [a, b] = connections.map(
      (nc) =>
        new ScopedCredentials(
          SECRET,
          60_000,
          new KvCredentialRevocations(new NatsKvStore(nc, bucket, { ttlMs: 60_000 }), { connected: () => connected }),
        ),
    );
  });
  afterAll(async () => {
    await (await new Kvm(connections[0]!).open(bucket)).destroy().catch(() => undefined);
    await Promise.all(connections.map((nc) => nc.close()));
  });

  it("should refuse on the other instance, at once, a turn's credential revoked on one", async () => {
    const token = a.mint(scope);
    expect(await b.verify(token)).toMatchObject(scope);
    await a.revoke(token);
    expect(await b.verify(token)).toBeUndefined();
    expect(await a.verify(token)).toBeUndefined();
  });

  it("should end a deleted session's credentials on every instance, and not those minted after", async () => {
    const before = b.mint({ ...scope, session: 'sess-del' });
    const other = b.mint({ ...scope, session: 'sess-kept' });
    await new Promise((resolve) => setTimeout(resolve, 2));
    await a.revokeSession('acme', 'sess-del');
    expect(await b.verify(before)).toBeUndefined();
    expect(await b.verify(other)).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(await a.verify(b.mint({ ...scope, session: 'sess-del' }))).toBeDefined();
  });

  it('should answer 503, never accept unchecked, while NATS is away', async () => {
    const token = a.mint(scope);
    connected = false;
    try {
      await expect(b.verify(token)).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: { dependency: 'NATS' },
      });
    } finally {
      connected = true;
    }
  });
});
