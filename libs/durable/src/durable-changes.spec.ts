import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { event } from '#contracts';
import { collect, gate, pollUntil, startOwnNats, type OwnServer } from '#testing';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { DurableChanges, type OutboxEvent } from './durable-changes.js';
import { InProcessBus, NatsBus, type Bus } from '#bus';
import { JsonlLog } from '#files';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const noted = event('note', 'written', 'NOTES', z.object({ id: z.string(), text: z.string() }));
const note = (id: string, text: string, msgId?: string) => ({
  event: noted,
  payload: { id, text },
  key: id,
  ...(msgId ? { msgId } : {}),
});
const texts = async (bus: Bus) =>
  (await collect(bus.readEvents('NOTES', 'alfred.note.written.v1.>'))).map((e) => (e.payload as { text: string }).text);

describe(DurableChanges.name, () => {
  let dir: string;
  const opened: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-outbox-'));
  });
  afterEach(async () => {
    for (const c of opened.splice(0).reverse()) await c.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A store the changes are written to: a map, so what landed can be asked. */
  const store = new Map<string, string>();
  const open = async (
    bus: Bus,
    landed = (e: OutboxEvent) => Promise.resolve(store.has((e.payload as { id: string }).id)),
  ) => {
    const changes = await DurableChanges.open({
      bus,
      dir: join(dir, 'outbox'),
      events: [noted],
      landed,
      logger: quiet,
      sweepMs: 200,
    });
    opened.push(changes);
    return changes;
  };
  const inProcess = () => {
    const bus = new InProcessBus({ dataDir: join(dir, 'bus'), logger: quiet });
    opened.push({ close: () => bus.close(1_000) });
    return bus;
  };

  it('should write, then publish each change with a message id of its own, answering the write result', async () => {
    const bus = inProcess();
    const changes = await open(bus);
    expect(
      await changes.apply([note('a', 'v1')], async () => {
        store.set('a', 'v1');
        return 'written';
      }),
    ).toBe('written');
    await changes.apply([note('a', 'v2')], async () => void store.set('a', 'v2'));
    // The same payload twice is two changes, not a duplicate: unique ids unless the caller gives one.
    await changes.apply([note('a', 'v2')], async () => void store.set('a', 'v2'));
    expect(await texts(bus)).toEqual(['v1', 'v2', 'v2']);
    expect(changes.waiting).toBe(0);
  });

  it('should change nothing and publish nothing when the write fails', async () => {
    const bus = inProcess();
    const changes = await open(bus);
    await expect(changes.apply([note('b', 'never')], () => Promise.reject(new Error('disk full')))).rejects.toThrow(
      'disk full',
    );
    expect(await texts(bus)).toEqual([]);
    expect(changes.waiting).toBe(0);
  });

  it('should publish events made from the write result (counts after an increment), kept with the commit', async () => {
    const bus = inProcess();
    const changes = await open(bus);
    let count = 0;
    const after = await changes.apply(
      (n: number) => [note('n', `count ${n}`)],
      async () => ++count,
    );
    expect(after).toBe(1);
    await changes.apply(
      (n: number) => [note('n', `count ${n}`)],
      async () => ++count,
    );
    expect(await texts(bus)).toEqual(['count 1', 'count 2']);
  });

  it('should answer a writer once its own change is published, not after the changes committed behind it', async () => {
    // The real bus, with the publish of chosen notes held until the test lets it go.
    const bus = inProcess();
    const held = new Map([
      ['a', gate()],
      ['c', gate()],
    ]);
    const publishing: string[] = [];
    const holding = new Proxy(bus, {
      get(target, prop) {
        if (prop !== 'publish') return Reflect.get(target, prop, target) as unknown;
        return async (...args: Parameters<Bus['publish']>) => {
          const id = (args[1] as { id: string }).id;
          publishing.push(id);
          await held.get(id)?.promise;
          return target.publish(...args);
        };
      },
    });
    const changes = await open(holding);
    const a = changes.apply([note('a', 'first')], async () => void store.set('a', 'first'));
    await pollUntil(() => publishing.includes('a'), 5_000, "a's publish to start");
    // c commits while the relay is still publishing a; its own publish then does not finish.
    const c = changes.apply([note('c', 'behind')], async () => void store.set('c', 'behind'));
    await pollUntil(() => changes.waiting === 2, 5_000, 'c to commit');
    held.get('a')!.open();
    const answered = await Promise.race([
      a.then(() => 'answered'),
      new Promise((r) => setTimeout(() => r('still waiting'), 3_000)),
    ]);
    expect(answered).toBe('answered');
    await pollUntil(() => publishing.length === 2, 5_000, "c's publish to start");
    expect(publishing).toEqual(['a', 'c']);
    held.get('c')!.open();
    await c;
    expect(await texts(bus)).toEqual(['first', 'behind']);
  });

  it('should answer a writer stalled in publish after publishWaitMs, and publish once the broker answers', async () => {
    const bus = inProcess();
    const held = gate();
    const stalling = new Proxy(bus, {
      get(target, prop) {
        if (prop !== 'publish') return Reflect.get(target, prop, target) as unknown;
        return async (...args: Parameters<Bus['publish']>) => {
          await held.promise;
          return target.publish(...args);
        };
      },
    });
    const changes = await DurableChanges.open({
      bus: stalling,
      dir: join(dir, 'outbox'),
      events: [noted],
      landed: async () => true,
      logger: quiet,
      publishWaitMs: 200,
    });
    opened.push(changes);
    const started = Date.now();
    await changes.apply([note('s', 'stalled')], async () => void store.set('s', 'stalled'));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(changes.waiting).toBe(1);
    held.open();
    await pollUntil(() => changes.waiting === 0, 5_000, 'the stalled publish to finish');
    expect(await texts(bus)).toEqual(['stalled']);
  });

  it('should answer once the events are stored, and mark a change sent once the bus made them durable', async () => {
    const bus = inProcess();
    const syncing = gate();
    let syncs = 0;
    const holding = new Proxy(bus, {
      get(target, prop) {
        if (prop !== 'syncEvents') return Reflect.get(target, prop, target) as unknown;
        return async () => {
          syncs++;
          await syncing.promise;
          if (syncs === 1) throw new Error('fsync failed');
          return target.syncEvents();
        };
      },
    });
    const changes = await open(holding);
    const outbox = async () => {
      const [name] = (await readdir(join(dir, 'outbox'))).filter((n) => n.endsWith('.jsonl'));
      return (await new JsonlLog<{ op: string }>(join(dir, 'outbox', name!)).readAll()).map((r) => r.op);
    };
    // Answered while the bus has not made the event durable: the outbox line holds it meanwhile.
    await changes.apply([note('s', 'stored')], async () => void store.set('s', 'stored'));
    expect(await texts(bus)).toEqual(['stored']);
    expect(await outbox()).toEqual(['intent', 'commit']);
    // The first sync fails: the change is published again (deduplicated) and marked sent after a sync that held.
    syncing.open();
    await pollUntil(async () => (await outbox()).includes('sent'), 5_000, 'the change to be marked sent');
    expect(syncs).toBe(2);
    expect(await texts(bus)).toEqual(['stored']);
    expect(changes.waiting).toBe(0);
  });

  it('should refuse a change whose event it does not know, before writing anything', async () => {
    const changes = await open(inProcess());
    const other = event('note', 'erased', 'NOTES', z.object({ id: z.string() }));
    let wrote = false;
    await expect(
      changes.apply([{ event: other, payload: { id: 'x' }, key: 'x' }], async () => void (wrote = true)),
    ).rejects.toThrow(/does not know/);
    expect(wrote).toBe(false);
  });

  it("should settle a crashed instance's intents: committed/landed published, others dropped, none twice", async () => {
    const bus = inProcess();
    // The file a process killed mid-way leaves behind (no lock: its holder is gone).
    const left = new JsonlLog<unknown>(join(dir, 'outbox', 'dead-instance.jsonl'));
    const intent = (tx: string, id: string, text: string) => ({
      op: 'intent',
      tx,
      events: [{ subject: noted.subject, payload: { id, text }, key: id, msgId: `${id}:${tx}` }],
    });
    store.clear();
    store.set('landed', 'x');
    for (const r of [
      intent('t1', 'committed', 'committed, not sent'),
      { op: 'commit', tx: 't1' },
      intent('t2', 'landed', 'crashed after the write'),
      intent('t3', 'lost', 'crashed before the write'),
      intent('t4', 'aborted', 'write failed'),
      { op: 'abort', tx: 't4' },
      intent('t5', 'sent', 'already published'),
      { op: 'commit', tx: 't5' },
      { op: 'sent', tx: 't5' },
    ])
      await left.append(r);
    await left.close();
    await open(bus);
    expect((await texts(bus)).sort()).toEqual(['committed, not sent', 'crashed after the write']);
    expect(await readdir(join(dir, 'outbox'))).not.toContain('dead-instance.jsonl');
  });

  it('should start a new outbox file once enough changes settled, dropping the old one', async () => {
    const bus = inProcess();
    const changes = await DurableChanges.open({
      bus,
      dir: join(dir, 'outbox'),
      events: [noted],
      landed: async () => false,
      logger: quiet,
      rotateAfter: 2,
    });
    opened.push(changes);
    const files = async () => (await readdir(join(dir, 'outbox'))).filter((n) => n.endsWith('.jsonl'));
    const first = await files();
    for (const text of ['r1', 'r2', 'r3']) await changes.apply([note('r', text)], async () => undefined);
    // The rotation follows the answers (once the changes are marked sent); the old file goes once it is retired.
    await pollUntil(async () => (await files()).join() !== first.join(), 5_000, 'a new outbox file');
    await pollUntil(async () => (await files()).length === 1, 5_000, 'the old outbox file to go');
    expect(await texts(bus)).toEqual(['r1', 'r2', 'r3']);
  });

  it('should lock each outbox file of its own before it exists, so no sweep can adopt it in between', async () => {
    const existedAtLock: boolean[] = [];
    const lock = lockfile.lock;
    lockfile.lock = (file, options) => {
      // With `update`: a lock of its own files (kept fresh); sweeps lock others'.
      if (options?.update !== undefined) existedAtLock.push(existsSync(file));
      return lock(file, options);
    };
    try {
      const bus = inProcess();
      const changes = await DurableChanges.open({
        bus,
        dir: join(dir, 'outbox'),
        events: [noted],
        landed: async () => true,
        logger: quiet,
        rotateAfter: 1,
      });
      opened.push(changes);
      await changes.apply([note('r1', 'v1')], async () => void store.set('r1', 'v1'));
      await changes.apply([note('r2', 'v1')], async () => void store.set('r2', 'v1'));
      // The first file and at least one rotation (which follows the answers, once the changes are marked sent).
      await pollUntil(() => existedAtLock.length >= 2, 5_000, 'a rotation');
      expect(existedAtLock.every((existed) => !existed)).toBe(true);
    } finally {
      lockfile.lock = lock;
    }
  });

  it('should leave a live instance’s file alone', async () => {
    const bus = inProcess();
    const first = await open(bus);
    await first.apply([note('c', 'one')], async () => void store.set('c', 'one'));
    const files = (await readdir(join(dir, 'outbox'))).filter((n) => n.endsWith('.jsonl'));
    await open(bus);
    expect((await readdir(join(dir, 'outbox'))).filter((n) => files.includes(n))).toEqual(files);
    expect(await texts(bus)).toEqual(['one']);
  });

  describe('journaled writes', () => {
    /** A store whose writes the outbox carries: applied to `live` once durable, replayed after a crash. */
    const journalStore = () => {
      const live = new Map<string, string>();
      const replayed: unknown[] = [];
      let flushes = 0;
      const target = {
        name: 'notes',
        replay: (data: unknown) => {
          replayed.push(data);
          const { id, text } = data as { id: string; text: string };
          live.set(id, text);
        },
        flush: async () => void flushes++,
      };
      const write = (id: string, text: string) => ({
        target: 'notes',
        data: { id, text },
        apply: () => void live.set(id, text),
      });
      return { live, replayed, target, write, flushes: () => flushes };
    };
    const openJournaled = async (
      bus: Bus,
      target: { name: string; replay(d: unknown): void; flush(): Promise<void> },
    ) => {
      const changes = await DurableChanges.open({
        bus,
        dir: join(dir, 'outbox'),
        events: [noted],
        landed: async () => false,
        logger: quiet,
        targets: [target],
      });
      opened.push(changes);
      return changes;
    };
    const lines = async () => {
      const [file] = (await readdir(join(dir, 'outbox'))).filter((n) => n.endsWith('.jsonl'));
      return new JsonlLog<{ op: string; writes?: unknown[]; events?: unknown[] }>(join(dir, 'outbox', file!)).readAll();
    };

    it('should make a change one line of its writes and events, apply them once durable, then publish', async () => {
      const bus = inProcess();
      const s = journalStore();
      const changes = await openJournaled(bus, s.target);
      await Promise.all([
        changes.commit([note('j1', 'one')], [s.write('j1', 'one')]),
        changes.commit([note('j2', 'two')], [s.write('j2', 'two')]),
      ]);
      expect([...s.live]).toEqual([
        ['j1', 'one'],
        ['j2', 'two'],
      ]);
      const changed = (await lines()).filter((r) => r.op === 'change');
      expect(changed.map((r) => [r.writes, r.events!.length])).toEqual([
        [[{ target: 'notes', data: { id: 'j1', text: 'one' } }], 1],
        [[{ target: 'notes', data: { id: 'j2', text: 'two' } }], 1],
      ]);
      expect(await texts(bus)).toEqual(['one', 'two']);
    });

    it('should refuse a write for a store it was not opened with (it could not replay it): no change', async () => {
      const bus = inProcess();
      const s = journalStore();
      const changes = await openJournaled(bus, s.target);
      await expect(changes.commit([note('x', 'lost')], [{ ...s.write('x', 'lost'), target: 'other' }])).rejects.toThrow(
        /not opened with other/,
      );
      expect(s.live.size).toBe(0);
      expect(await texts(bus)).toEqual([]);
    });

    it("should replay a killed run's leftovers in order, before serving, then flush and delete its files", async () => {
      const bus = inProcess();
      const change = (tx: string, id: string, text: string) => ({
        op: 'change',
        tx,
        events: [{ subject: noted.subject, payload: { id, text }, key: id, msgId: `${id}:${tx}` }],
        writes: [{ target: 'notes', data: { id, text } }],
      });
      // Two files of a run killed at once (locks left behind, "fresh"): the older one holds the first write of `k`.
      const older = join(dir, 'outbox', `${String(1).padStart(15, '0')}-a.jsonl`);
      const newer = join(dir, 'outbox', `${String(2).padStart(15, '0')}-b.jsonl`);
      await new JsonlLog<unknown>(older).append(change('t1', 'k', 'first'));
      await new JsonlLog<unknown>(older).append({ op: 'sent', tx: 't1' });
      for (const r of [change('t2', 'k', 'second'), change('t3', 'gone', 'aborted'), { op: 'abort', tx: 't3' }])
        await new JsonlLog<unknown>(newer).append(r);
      // A killed holder's lock: its directory, fresh (a live lockfile.lock would keep refreshing it from this process).
      for (const f of [older, newer]) await mkdir(`${f}.lock`);
      const s = journalStore();
      await openJournaled(bus, s.target);
      expect(s.replayed).toEqual([
        { id: 'k', text: 'first' },
        { id: 'k', text: 'second' },
      ]);
      expect(s.live.get('k')).toBe('second');
      expect(s.flushes()).toBeGreaterThan(0);
      expect(existsSync(older) || existsSync(newer)).toBe(false);
      // The sent change is not published again; the one left unsent is.
      await pollUntil(async () => (await texts(bus)).length > 0, 5_000, 'the carried change to be published');
      expect(await texts(bus)).toEqual(['second']);
    });
  });

  describe('with a NATS server that goes away', () => {
    let nats: OwnServer;
    let bus: NatsBus;
    beforeEach(async () => {
      nats = await startOwnNats(join(dir, 'nats'));
      bus = await NatsBus.connect({
        url: nats.url,
        name: 'outbox-spec',
        logger: quiet,
        reconnect: { baseMs: 50, maxMs: 200 },
      });
      opened.push({
        close: async () => {
          await bus.close(1_000);
          await nats.stop();
        },
      });
    });

    it('should acknowledge changes while the broker is away and publish them in order once it is back', async () => {
      const changes = await open(bus);
      await changes.apply([note('d', 'before')], async () => void store.set('d', 'before'));
      await nats.stop('SIGKILL');
      await changes.apply([note('d', 'during 1')], async () => void store.set('d', 'during 1'));
      await changes.apply([note('d', 'during 2')], async () => void store.set('d', 'during 2'));
      expect(changes.waiting).toBe(2);
      await nats.start();
      await pollUntil(() => changes.waiting === 0, 20_000, 'the relay to publish');
      expect(await texts(bus)).toEqual(['before', 'during 1', 'during 2']);
    }, 40_000);
  });
});
