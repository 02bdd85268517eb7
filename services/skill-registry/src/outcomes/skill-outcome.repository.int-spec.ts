import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { NatsBus, KvCounters, NatsKvStore } from '#bus';
import { describeWithNats, testServers } from '#testing';
import { LanceDbStore } from '#vector-store';
import { moveSkillOutcomeRows, SkillOutcomeRepository } from './skill-outcome.repository.js';

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
    nats = await Promise.all(
      [1, 2].map((n) => NatsBus.connect({ url: testServers.natsUrl, name: `so-${n}`, logger: quiet })),
    );
  });
  afterAll(async () => {
    await new Kvm(nats[0]!.nc).open(bucket).then(
      (kv) => kv.destroy(),
      () => undefined,
    );
    await Promise.all(nats.map((n) => n.close(2_000)));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should count every one of 40 concurrent outcomes recorded through two instances', async () => {
    const [a, b] = nats.map((n) => new SkillOutcomeRepository(new KvCounters(new NatsKvStore(n.nc, bucket))));

    await Promise.all(
      Array.from({ length: 20 }, (_, i) => [
        a!.add('t1', 'pdf', { success: 1, failure: 0 }),
        b!.add('t1', 'pdf', { success: i < 5 ? 1 : 0, failure: i < 5 ? 0 : 1 }),
      ]).flat(),
    );

    expect((await b!.getMany('t1', ['pdf'])).get('pdf')).toMatchObject({ success: 25, failure: 15 });
    expect((await a!.getMany('t2', ['pdf'])).get('pdf')).toBeUndefined();
  });

  it("should move an earlier version's outcome rows to counters, keep a key counted since, drop the rows", async () => {
    const counters = new KvCounters(new NatsKvStore(nats[0]!.nc, bucket));
    const legacy = await store.open({
      name: 'skill_outcomes',
      embedderId: 'placeholder',
      dimension: 8,
      fields: { success: 'number', failure: 'number', updated_at: 'string' },
    });
    const row = (tenant: string, id: string, success: number, failure: number) => ({
      id,
      tenant,
      agent: '_skill_outcomes',
      text: id,
      vector: new Float32Array(8).fill(0.3),
      fields: { success, failure, updated_at: '2026-01-01T00:00:00.000Z' },
    });
    await legacy.upsert([row('t3', 'pdf', 4, 1), row('t3', 'csv', 2, 2)]);
    const repo = new SkillOutcomeRepository(counters);
    await repo.add('t3', 'csv', { success: 7, failure: 0 });

    expect(await moveSkillOutcomeRows(store, counters)).toBe(2);

    expect((await repo.getMany('t3', ['pdf', 'csv', 'zip'])).size).toBe(2);
    expect((await repo.getMany('t3', ['pdf'])).get('pdf')).toMatchObject({ success: 4, failure: 1 });
    expect((await repo.getMany('t3', ['csv'])).get('csv')).toMatchObject({ success: 7, failure: 0 });
    expect(await store.describe('skill_outcomes')).toBeUndefined();
    expect(await moveSkillOutcomeRows(store, counters)).toBe(0);
  });
});
