import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { NatsBus, KvCounters, NatsKvStore } from '#bus';
import { describeWithNats, testServers } from '#testing';
import { LanceDbStore } from '#vector-store';
import { openSkillOutcomes, SkillOutcomeRepository } from './skill-outcome.repository.js';

const describeNats = await describeWithNats();
const quiet = { error: () => undefined, warn: () => undefined };

/** Two registry instances (their own connections, no shared lock) over one store and one counter bucket. */
describeNats(`${SkillOutcomeRepository.name} with shared counters`, () => {
  let dir: string;
  let store: LanceDbStore;
  let nats: NatsBus[];
  let bucket: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-outcomes-'));
    store = new LanceDbStore({ dir: join(dir, 'vectors') });
    bucket = `counters-so-${randomUUID().slice(0, 8)}`;
    nats = await Promise.all([1, 2].map((n) => NatsBus.connect({ url: testServers.natsUrl, name: `so-${n}`, logger: quiet })));
  });
  afterAll(async () => {
    await new Kvm(nats[0]!.nc).open(bucket).then((kv) => kv.destroy(), () => undefined);
    await Promise.all(nats.map((n) => n.close(2_000)));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should count every one of 40 concurrent outcomes recorded through two instances', async () => {
    const [a, b] = await Promise.all(nats.map(async (n) => new SkillOutcomeRepository(await openSkillOutcomes(store), new KvCounters(new NatsKvStore(n.nc, bucket)))));
    const at = new Date().toISOString();

    await Promise.all(Array.from({ length: 20 }, (_, i) => [a!.add('t1', 'pdf', { success: 1, failure: 0 }, at), b!.add('t1', 'pdf', { success: i < 5 ? 1 : 0, failure: i < 5 ? 0 : 1 }, at)]).flat());

    expect((await b!.getMany('t1', ['pdf'])).get('pdf')).toMatchObject({ success: 25, failure: 15 });
    expect((await a!.getMany('t2', ['pdf'])).get('pdf')).toBeUndefined();
  });
});
