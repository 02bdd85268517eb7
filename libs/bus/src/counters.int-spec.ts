import { randomUUID } from 'node:crypto';
import { Kvm } from '@nats-io/kv';
import { describeWithNats, testServers } from '#testing';
import { counterKey, KvCounters } from './counters.js';
import { NatsKvStore } from './nats-kv.store.js';
import { NatsBus } from './nats.bus.js';

const describeNats = await describeWithNats();
const quiet = { error: () => undefined, warn: () => undefined };

describeNats(`${KvCounters.name} on NATS KV`, () => {
  let buses: NatsBus[];
  let bucket: string;
  beforeEach(async () => {
    bucket = `counters-test-${randomUUID().slice(0, 8)}`;
    buses = await Promise.all(
      [1, 2].map((n) => NatsBus.connect({ url: testServers.natsUrl, name: `counters-${n}`, logger: quiet })),
    );
  });
  afterEach(async () => {
    await new Kvm(buses[0]!.nc).open(bucket).then(
      (kv) => kv.destroy(),
      () => undefined,
    );
    await Promise.all(buses.map((b) => b.close(2_000)));
  });

  describe('add', () => {
    it('should count every one of 80 concurrent increments from two connections', async () => {
      const [a, b] = buses.map((bus) => new KvCounters(new NatsKvStore(bus.nc, bucket))) as [KvCounters, KvCounters];
      const key = counterKey('tenant', 'agent', 'memory-1');

      await Promise.all(
        Array.from({ length: 40 }, (_, i) => [a.add(key, { up: 1 }), b.add(key, { up: 1, down: i % 2 })]).flat(),
      );

      expect((await a.get([key])).get(key)).toEqual({ up: 80, down: 20 });
    });

    it('should start a new key from its seed and read the seed only then', async () => {
      const counters = new KvCounters(new NatsKvStore(buses[0]!.nc, bucket));
      let seeds = 0;
      const seed = async () => {
        seeds++;
        return { up: 5 };
      };

      await counters.add(counterKey('t', 'k'), { up: 1 }, seed);
      const after = await counters.add(counterKey('t', 'k'), { up: -1, down: 1 }, seed);

      expect(after).toEqual({ up: 5, down: 1 });
      expect(seeds).toBe(1);
    });
  });

  describe('list', () => {
    it('should list the totals of the keys under the prefix only, by key', async () => {
      const counters = new KvCounters(new NatsKvStore(buses[0]!.nc, bucket));
      await counters.add(counterKey('t', 'alfred', 'm1'), { up: 2 });
      await counters.add(counterKey('t', 'alfred', 'm2'), { down: 1 });
      await counters.add(counterKey('t', 'alfredo', 'm1'), { up: 7 });

      const listed = await counters.list('t', 'alfred');

      expect(listed).toEqual(
        new Map([
          [counterKey('t', 'alfred', 'm1'), { up: 2 }],
          [counterKey('t', 'alfred', 'm2'), { down: 1 }],
        ]),
      );
      expect(await counters.list('t', 'nobody')).toEqual(new Map());
    });
  });

  describe('deletePrefix', () => {
    it('should drop the keys under the prefix only, and count a dropped key afresh', async () => {
      const counters = new KvCounters(new NatsKvStore(buses[0]!.nc, bucket));
      await counters.add(counterKey('t', 'alfred', 'm1'), { up: 2 });
      await counters.add(counterKey('t', 'jarvis', 'm1'), { up: 3 });

      await counters.deletePrefix('t', 'alfred');

      const left = await counters.get([counterKey('t', 'alfred', 'm1'), counterKey('t', 'jarvis', 'm1')]);
      expect([...left.values()]).toEqual([{ up: 3 }]);
      expect(await counters.add(counterKey('t', 'alfred', 'm1'), { up: 1 })).toEqual({ up: 1 });
    });
  });
});
