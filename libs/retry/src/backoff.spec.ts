import { Backoff } from './backoff.js';

describe(Backoff.name, () => {
  describe('next', () => {
    it('should grow the delay exponentially up to the cap, drawing each from the upper half of its step', () => {
      const backoff = new Backoff({ baseMs: 100, maxMs: 1_000 });
      const steps = [100, 200, 400, 800, 1_000, 1_000, 1_000];
      for (const step of steps) {
        const delay = backoff.next();
        expect(delay).toBeGreaterThanOrEqual(step / 2);
        expect(delay).toBeLessThanOrEqual(step);
      }
    });

    it('should jitter: many delays of one step are not all equal', () => {
      const delays = new Set(Array.from({ length: 20 }, () => new Backoff({ baseMs: 1_000, maxMs: 1_000 }).next()));
      expect(delays.size).toBeGreaterThan(1);
    });

    it('should start over after reset', () => {
      const backoff = new Backoff({ baseMs: 100, maxMs: 10_000 });
      for (let i = 0; i < 6; i++) backoff.next();
      backoff.reset();
      expect(backoff.next()).toBeLessThanOrEqual(100);
    });
  });
});
