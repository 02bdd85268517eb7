import { gate, pollUntil } from '#testing';
import { Slots } from './skill-execution.service.js';

describe(Slots.name, () => {
  describe('run', () => {
    it('should run at most its size at once and start waiting work in arrival order', async () => {
      const slots = new Slots(2);
      const gates = [gate(), gate(), gate()];
      const started: number[] = [];
      const runs = gates.map((g, i) => slots.run(async () => { started.push(i); await g.promise; return i; }));
      await pollUntil(() => started.length === 2, 1000, 'two started');
      expect(started).toEqual([0, 1]);
      gates[1]!.open();
      await pollUntil(() => started.length === 3, 1000, 'the third started');
      gates[0]!.open();
      gates[2]!.open();
      expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    });

    it('should free its slot when the work fails', async () => {
      const slots = new Slots(1);
      await expect(slots.run(async () => { throw new Error('boom'); })).rejects.toThrow('boom');
      expect(await slots.run(async () => 'next')).toBe('next');
    });
  });
});
