import { randomUUID } from 'node:crypto';
import { event, route, ServiceName } from '#contracts';
import { busContract, collect, describeWithNats, gate, pollUntil, testServers } from '#testing';
import { z } from 'zod';
import { NatsBus, type NatsBusOptions } from './nats.bus.js';

const describeNats = await describeWithNats();
const quiet = { error: () => undefined, warn: () => undefined };

/** A bus isolated by its own subject prefix; dispose deletes every stream the prefix created. */
async function isolatedBus(overrides: Partial<NatsBusOptions> = {}) {
  const subjectPrefix = `t-${randomUUID().slice(0, 8)}.`;
  const bus = await NatsBus.connect({
    url: testServers.natsUrl,
    name: 'bus-int-spec',
    subjectPrefix,
    logger: quiet,
    ...overrides,
  });
  return { bus, subjectPrefix, dispose: () => disposeBus(bus) };
}

async function disposeBus(bus: NatsBus): Promise<void> {
  const jsm = await bus.jsm();
  const streamPrefix = bus.stream('');
  for await (const name of jsm.streams.names()) {
    if (name.startsWith(streamPrefix)) await jsm.streams.delete(name);
  }
  await bus.close(2_000);
}

describeNats(NatsBus.name, () => {
  describe('contract', () => {
    busContract(async (logger) => isolatedBus({ logger }));
  });

  const Work = route(ServiceName.Distiller, 'int-work', z.object({ n: z.number() }), z.object({ by: z.string() }), {
    global: true,
  });
  const noted = event('int-note', 'written', 'INT_NOTES', z.object({ text: z.string() }));

  describe('connection lifecycle', () => {
    it('should report a connection closed without close() being called, and not one closed by close()', async () => {
      const closedFor: unknown[] = [];
      const lost = await isolatedBus({ onClosed: (err) => closedFor.push(err ?? 'closed') });
      await lost.bus.nc.close();
      await pollUntil(() => closedFor.length === 1, 5_000, 'the unrequested close to be reported');
      expect(lost.bus.connectionState()).toBe('closed');
      await expect(lost.bus.request(Work, { n: 1 })).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: { dependency: 'NATS' },
      });

      const calm: unknown[] = [];
      const kept = await isolatedBus({ onClosed: (err) => calm.push(err) });
      expect(kept.bus.connectionState()).toBe('connected');
      await kept.dispose();
      await kept.bus.nc.closed();
      expect(calm).toEqual([]);
    });
  });

  describe('serve', () => {
    it('should share a queue group between two connections', async () => {
      const a = await isolatedBus();
      const b = await NatsBus.connect({
        url: testServers.natsUrl,
        name: 'bus-int-b',
        subjectPrefix: a.subjectPrefix,
        logger: quiet,
      });
      try {
        a.bus.serve(Work, async () => ({ by: 'a' }));
        b.serve(Work, async () => ({ by: 'b' }));
        await a.bus.nc.flush();
        await b.nc.flush();
        const seen = new Set<string>();
        for (let i = 0; i < 60 && seen.size < 2; i++) seen.add((await a.bus.request(Work, { n: i })).by);
        expect([...seen].sort()).toEqual(['a', 'b']);
      } finally {
        await b.close(2_000);
        await a.dispose();
      }
    });
  });

  describe('publish', () => {
    it('should make an acknowledged event readable from another connection', async () => {
      const writer = await isolatedBus();
      const reader = await NatsBus.connect({
        url: testServers.natsUrl,
        name: 'bus-int-reader',
        subjectPrefix: writer.subjectPrefix,
        logger: quiet,
      });
      try {
        await writer.bus.publish(noted, { text: 'durable' }, { key: 'k1', msgId: 'k1' });
        const events = await collect(reader.readEvents('INT_NOTES', 'alfred.int-note.written.v1.k1'));
        expect(events.map((e) => [e.subject, e.payload])).toEqual([
          ['alfred.int-note.written.v1.k1', { text: 'durable' }],
        ]);
        const jsm = await writer.bus.jsm();
        const info = await jsm.streams.info(writer.bus.stream('INT_NOTES'));
        expect([info.config.subjects, info.config.storage]).toEqual([
          [`${writer.subjectPrefix}alfred.int-note.*.v1.>`],
          'file',
        ]);
      } finally {
        await reader.close(2_000);
        await writer.dispose();
      }
    });
  });

  describe('event retention (ALFRED_EVENTS_MAX_AGE_DAYS)', () => {
    it('should give event streams the maximum age, also one found without it, but never a work queue', async () => {
      const day = 86_400_000;
      const plain = await isolatedBus();
      try {
        await plain.bus.publish(noted, { text: 'kept for ever' }, { key: 'k', msgId: 'k' });
        const aged = await NatsBus.connect({
          url: testServers.natsUrl,
          name: 'bus-int-aged',
          subjectPrefix: plain.subjectPrefix,
          logger: quiet,
          eventsMaxAgeMs: day,
        });
        try {
          await aged.publish(noted, { text: 'aged' }, { key: 'k2', msgId: 'k2' });
          const jobs = aged.queue({
            name: 'int-aged-jobs',
            stream: 'INT_AGED_JOBS',
            subject: 'alfred.jobs.int-aged.v1',
            payload: z.object({}),
            maxDeliver: 1,
            backoffMs: [],
            ackWaitMs: 1_000,
          });
          await jobs.enqueue({}, { msgId: 'j' });
          const jsm = await aged.jsm();
          const nanos = (await jsm.streams.info(aged.stream('INT_NOTES'))).config.max_age;
          expect(nanos / 1e6).toBe(day);
          expect((await jsm.streams.info(aged.stream('INT_AGED_JOBS'))).config.max_age).toBe(0);
        } finally {
          await aged.close(2_000);
        }
      } finally {
        await plain.dispose();
      }
    });
  });

  describe('close', () => {
    it('should let an in-flight request finish before the connection closes', async () => {
      const server = await isolatedBus();
      const client = await NatsBus.connect({
        url: testServers.natsUrl,
        name: 'bus-int-client',
        subjectPrefix: server.subjectPrefix,
        logger: quiet,
      });
      const held = gate();
      let started = false;
      server.bus.serve(Work, async () => {
        started = true;
        await held.promise;
        return { by: 'closing' };
      });
      await server.bus.nc.flush();
      const reply = client.request(Work, { n: 1 });
      await pollUntil(() => started, 3_000, 'the handler to start');
      const closing = server.dispose();
      held.open();
      await expect(reply).resolves.toEqual({ by: 'closing' });
      await closing;
      expect(server.bus.isConnected()).toBe(false);
      await client.close(2_000);
    });
  });
});
