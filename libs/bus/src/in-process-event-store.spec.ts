import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collect } from '#testing';
import { InProcessEventStore } from './in-process-event-store.js';
import { JsonlLog } from '#files';
import { readFile } from 'node:fs/promises';

/** Fakes only the clock: the log's file I/O and its timers run as they do. */
const fakeClock = () =>
  jest.useFakeTimers({
    doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
  });
const subjects = (events: { subject: string }[]) => events.map((e) => e.subject);

describe(InProcessEventStore.name, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-events-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function fill(store: InProcessEventStore): Promise<void> {
    for (let i = 0; i < 30; i++) {
      const key = `m${i % 3}`;
      await store.append('MEMORY', `alfred.memory.${i % 2 ? 'updated' : 'created'}.v1.${key}`, { i }, `msg-${i}`);
    }
  }

  describe('read', () => {
    it("should serve one key's history in order, wildcards before the key, before and after a restart", async () => {
      const store = new InProcessEventStore(dir);
      await fill(store);

      const live = await collect(store.read('MEMORY', 'alfred.memory.*.v1.m1'));
      const createdOnly = await collect(store.read('MEMORY', 'alfred.memory.created.v1.m1'));
      await store.close();
      const reopened = new InProcessEventStore(dir);
      const after = await collect(reopened.read('MEMORY', 'alfred.memory.*.v1.m1'));

      expect(live.map((e) => (e.payload as { i: number }).i)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
      expect(live.map((e) => e.seq)).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29]);
      expect(createdOnly.map((e) => (e.payload as { i: number }).i)).toEqual([4, 10, 16, 22, 28]);
      expect(after).toEqual(live);
      expect(await collect(reopened.read('MEMORY', 'alfred.memory.*.v1.none'))).toEqual([]);
      expect(await collect(reopened.read('MEMORY', 'alfred.memory.created.v1.*'))).toHaveLength(15);
      await reopened.close();
    });

    it('should include the events another store over the same folder appended', async () => {
      const mine = new InProcessEventStore(dir);
      const other = new InProcessEventStore(dir);
      await mine.append('MEMORY', 'alfred.memory.created.v1.k', { by: 'mine' }, 'a');
      expect(subjects(await collect(mine.read('MEMORY', 'alfred.memory.*.v1.k')))).toHaveLength(1);

      await other.append('MEMORY', 'alfred.memory.updated.v1.k', { by: 'other' }, 'b');

      const events = await collect(mine.read('MEMORY', 'alfred.memory.*.v1.k'));
      expect(events.map((e) => e.payload)).toEqual([{ by: 'mine' }, { by: 'other' }]);
      await Promise.all([mine.close(), other.close()]);
    });
  });

  describe('compaction to a maximum age (JetStream max_age on the NATS bus)', () => {
    const day = 86_400_000;
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

    it('should drop expired events when it opens, keeping every other event readable by key and in order', async () => {
      // A log as an earlier run left it: two events of m1 from 3 days ago, then newer ones.
      const log = new JsonlLog<unknown>(join(dir, 'MEMORY.jsonl'));
      const event = (seq: number, key: string, at: string) => ({
        seq,
        subject: `alfred.memory.updated.v1.${key}`,
        time: at,
        msgId: `id-${seq}`,
        payload: { seq },
      });
      for (const e of [
        event(1, 'm1', ago(3 * day)),
        event(2, 'm1', ago(3 * day)),
        event(3, 'm1', ago(1_000)),
        event(4, 'm2', ago(500)),
      ])
        await log.append(e);
      await log.close();

      const store = new InProcessEventStore(dir, day);
      expect((await collect(store.read('MEMORY', 'alfred.memory.*.v1.m1'))).map((e) => e.seq)).toEqual([3]);
      expect((await collect(store.read('MEMORY', 'alfred.memory.*.v1.m2'))).map((e) => e.seq)).toEqual([4]);
      await store.append('MEMORY', 'alfred.memory.created.v1.m3', { seq: 5 }, 'id-5');
      expect((await collect(store.read('MEMORY', 'alfred.memory.*.v1.*'))).map((e) => e.seq)).toEqual([3, 4, 5]);
      await store.close();
      expect((await readFile(join(dir, 'MEMORY.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
    });

    it('should keep everything without a maximum age', async () => {
      const store = new InProcessEventStore(dir);
      await fill(store);
      await store.close();
      const reopened = new InProcessEventStore(dir, 0);
      expect(await collect(reopened.read('MEMORY', 'alfred.memory.*.v1.*'))).toHaveLength(30);
      await reopened.close();
    });

    afterEach(() => jest.useRealTimers());

    it('should compact on append once the oldest event has expired', async () => {
      fakeClock();
      const store = new InProcessEventStore(dir, 300);
      await store.append('MEMORY', 'alfred.memory.created.v1.a', {}, 'a');
      await store.append('MEMORY', 'alfred.memory.created.v1.b', {}, 'b');
      jest.setSystemTime(Date.now() + 400);
      await store.append('MEMORY', 'alfred.memory.created.v1.c', {}, 'c');
      expect(subjects(await collect(store.read('MEMORY', 'alfred.memory.*.v1.*')))).toEqual([
        'alfred.memory.created.v1.c',
      ]);
      expect(await collect(store.read('MEMORY', 'alfred.memory.*.v1.a'))).toEqual([]);
      await store.append('MEMORY', 'alfred.memory.updated.v1.c', {}, 'c2');
      expect(subjects(await collect(store.read('MEMORY', 'alfred.memory.*.v1.c')))).toEqual([
        'alfred.memory.created.v1.c',
        'alfred.memory.updated.v1.c',
      ]);
      await store.close();
    });
  });
});
