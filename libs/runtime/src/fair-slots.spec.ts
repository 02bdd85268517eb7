import { FairSlots, type SlotRelease } from './fair-slots.js';

/** Acquires in order and records when each was granted; the test releases by name. */
function harness(slots: FairSlots) {
  const granted: string[] = [];
  const releases = new Map<string, SlotRelease>();
  const ask = (key: string, name: string, signal?: AbortSignal) =>
    slots.acquire(key, signal).then((release) => {
      granted.push(name);
      releases.set(name, release);
    });
  const release = (name: string) => releases.get(name)!();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { granted, ask, release, settle };
}

describe(FairSlots.name, () => {
  describe('acquire', () => {
    it('should keep a flooding key to its share, so another key starts at once', async () => {
      const h = harness(new FairSlots(4, 2));
      for (let i = 1; i <= 6; i++) void h.ask('a', `a${i}`);
      void h.ask('b', 'b1');
      await h.settle();
      expect(h.granted).toEqual(['a1', 'a2', 'b1']);
    });

    it('should serve waiting keys round-robin, each key in its own arrival order', async () => {
      const slots = new FairSlots(2);
      const h = harness(slots);
      for (let i = 1; i <= 5; i++) void h.ask('a', `a${i}`);
      void h.ask('b', 'b1');
      void h.ask('b', 'b2');
      void h.ask('c', 'c1');
      await h.settle();
      expect(h.granted).toEqual(['a1', 'a2']);
      for (const name of ['a1', 'a2', 'a3', 'b1', 'c1', 'a4', 'b2']) {
        h.release(name);
        await h.settle();
      }
      // a3 queued first, then b and c: one each in turn while all three wait; a alone at the end.
      expect(h.granted).toEqual(['a1', 'a2', 'a3', 'b1', 'c1', 'a4', 'b2', 'a5']);
      expect(slots.counts).toEqual({ running: 1, waiting: 0 });
    });

    it('should hold a key at its share even with slots free, and grant it on its own release', async () => {
      const h = harness(new FairSlots(8, 2));
      for (let i = 1; i <= 4; i++) void h.ask('a', `a${i}`);
      await h.settle();
      expect(h.granted).toEqual(['a1', 'a2']);
      h.release('a2');
      await h.settle();
      expect(h.granted).toEqual(['a1', 'a2', 'a3']);
    });

    it('should take a waiter out of line when its signal aborts, and count a double release once', async () => {
      const slots = new FairSlots(1);
      const h = harness(slots);
      const aborter = new AbortController();
      void h.ask('a', 'a1');
      const waiting = h.ask('b', 'b1', aborter.signal);
      void h.ask('c', 'c1');
      await h.settle();
      aborter.abort(new Error('turn cancelled'));
      await expect(waiting).rejects.toThrow('turn cancelled');
      h.release('a1');
      h.release('a1');
      await h.settle();
      expect(h.granted).toEqual(['a1', 'c1']);
      expect(slots.counts).toEqual({ running: 1, waiting: 0 });
    });

    it('should free the slot when work fails', async () => {
      const slots = new FairSlots(1);
      await expect(
        slots.run('a', async () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await slots.run('b', async () => 'next')).toBe('next');
    });
  });
});
