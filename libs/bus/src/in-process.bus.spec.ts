import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { event, ServiceName } from '#contracts';
import { busContract, collect, pollUntil } from '#testing';
import { z } from 'zod';
import { InProcessBus } from './in-process.bus.js';
import { queueDef } from './queue.js';

const quiet = { error: () => undefined, warn: () => undefined };

describe(InProcessBus.name, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'alfred-bus-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  describe('contract', () => {
    busContract(async (logger) => {
      const bus = new InProcessBus({ dataDir, logger });
      return { bus, dispose: () => bus.close(1_000) };
    });
  });

  const noted = event(
    'note',
    'written',
    'NOTES',
    z.object({ text: z.string(), tags: z.array(z.string()).default([]) }),
  );

  describe('publish', () => {
    it('should keep events, defaults applied, for the next instance on the same data dir', async () => {
      const first = new InProcessBus({ dataDir, logger: quiet });
      await first.publish(noted, { text: 'kept' } as never, { key: 'n1', msgId: 'n1' });
      await first.close();
      const second = new InProcessBus({ dataDir, logger: quiet });
      await second.publish(noted, { text: 'kept' } as never, { key: 'n1', msgId: 'n1' });
      await second.publish(noted, { text: 'next', tags: [] }, { key: 'n2', msgId: 'n2' });
      const events = await collect(second.readEvents('NOTES', 'alfred.note.written.v1.*'));
      await second.close();
      expect(events.map((e) => [e.seq, e.payload])).toEqual([
        [1, { text: 'kept', tags: [] }],
        [2, { text: 'next', tags: [] }],
      ]);
    });

    it('should skip a torn last line and keep appending on a fresh line', async () => {
      const bus = new InProcessBus({ dataDir, logger: quiet });
      await bus.publish(noted, { text: 'a', tags: [] }, { key: 'n1', msgId: 'm1' });
      await bus.close();
      await appendFile(join(dataDir, 'events', 'NOTES.jsonl'), '{"seq":2,"subj');
      const again = new InProcessBus({ dataDir, logger: quiet });
      await again.publish(noted, { text: 'b', tags: [] }, { key: 'n2', msgId: 'm2' });
      const events = await collect(again.readEvents('NOTES', '>'));
      await again.close();
      expect(events.map((e) => e.payload)).toEqual([
        { text: 'a', tags: [] },
        { text: 'b', tags: [] },
      ]);
    });

    it('should refuse a key that is not one subject token', async () => {
      const bus = new InProcessBus({ dataDir, logger: quiet });
      await expect(bus.publish(noted, { text: 'a', tags: [] }, { key: 'a.b', msgId: 'x' })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
      });
      await bus.close();
    });
  });

  describe('request', () => {
    it('should send every queue group of a subject the request', async () => {
      const bus = new InProcessBus({ dataDir, logger: quiet });
      const route = {
        subject: 'alfred.memory.fanout.v1',
        service: ServiceName.Memory,
        request: z.object({}),
        response: z.object({}),
        options: { global: true },
      };
      const groups: string[] = [];
      const joined = (group: string) => async () => {
        groups.push(group);
        return {};
      };
      bus.serve(route, joined('one'), { queue: 'one' });
      bus.serve(route, joined('two'), { queue: 'two' });
      await bus.request(route, {});
      await pollUntil(() => groups.length === 2, 1_000, 'both groups');
      await bus.close();
      expect(groups.sort()).toEqual(['one', 'two']);
    });
  });

  describe('close', () => {
    it('should give up waiting for a stuck handler at the deadline and say so', async () => {
      const warnings: string[] = [];
      const bus = new InProcessBus({ dataDir, logger: { ...quiet, warn: (_o, msg) => void warnings.push(msg) } });
      const route = {
        subject: 'alfred.memory.stuck.v1',
        service: ServiceName.Memory,
        request: z.object({}),
        response: z.object({}),
        options: { global: true },
      };
      bus.serve(route, () => new Promise(() => undefined));
      const request = bus.request(route, {}, { timeoutMs: 1_000 }).catch((err: unknown) => err);
      await bus.close(50);
      expect(warnings).toEqual(['bus did not drain in time; closing']);
      await expect(request).resolves.toMatchObject({ code: 'SERVICE_TIMEOUT' });
    });
  });

  describe('queue', () => {
    const def = queueDef({
      name: 'restart-jobs',
      stream: 'JOBS',
      subject: 'alfred.jobs.restart.v1',
      payload: z.object({ id: z.string() }),
      backoffMs: [10],
    });

    it('should run jobs left unfinished by a previous instance', async () => {
      const first = new InProcessBus({ dataDir, logger: quiet });
      await first.queue(def).enqueue({ id: 'left' }, { msgId: 'left' });
      const consumed: string[] = [];
      const c1 = await first.queue(def).consume(async (job) => void consumed.push(job.id));
      await first.queue(def).enqueue({ id: 'done' }, { msgId: 'done' });
      await pollUntil(() => consumed.length === 2, 2_000, 'first instance jobs');
      await c1.stop();
      await first.queue(def).enqueue({ id: 'pending' }, { msgId: 'pending' });
      await first.close();

      const second = new InProcessBus({ dataDir, logger: quiet });
      const rerun: string[] = [];
      const c2 = await second.queue(def).consume(async (job) => void rerun.push(job.id));
      await pollUntil(() => rerun.length === 1, 2_000, 'the pending job');
      await c2.stop();
      await second.queue(def).enqueue({ id: 'done' }, { msgId: 'done' });
      await second.close();
      expect(rerun).toEqual(['pending']);
      const lines = (await readFile(join(dataDir, 'queues', 'restart-jobs.jsonl'), 'utf8')).trim().split('\n');
      expect(lines).toHaveLength(6);
    });
  });
});
