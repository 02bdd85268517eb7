import { Metrics } from '#metrics';
import { quantileMs, RequestHistory } from './request-history.js';

describe(RequestHistory.name, () => {
  describe('sample', () => {
    it('should turn the counters /metrics exposes into per-step rate, 5xx rate and latency', async () => {
      let now = Date.parse('2026-11-20T10:00:00Z');
      const history = new RequestHistory(10_000, 3_600_000, () => now);
      await history.sample();
      for (let i = 0; i < 19; i++) Metrics.httpRequests.inc({ method: 'GET', route: '/spec-history', status: '200' });
      Metrics.httpRequests.inc({ method: 'GET', route: '/spec-history', status: '503' });
      for (let i = 0; i < 20; i++)
        Metrics.httpDuration.observe({ method: 'GET', route: '/spec-history' }, i < 18 ? 0.004 : 0.2);
      now += 10_000;
      await history.sample();

      const [point] = history.view().points;
      expect(point).toMatchObject({
        at: '2026-11-20T10:00:10.000Z',
        requests: 20,
        errors: 1,
        rate_per_s: 2,
        error_rate_per_s: 0.1,
      });
      expect(point!.mean_ms).toBeCloseTo((18 * 4 + 2 * 200) / 20, 6);
      // The 19th of 20 observations lies in the 0.1–0.25 s bucket.
      expect(point!.p95_ms).toBeGreaterThan(100);
      expect(point!.p95_ms).toBeLessThanOrEqual(250);
    });

    it('should keep one hour of points and say so when nothing was asked (no latency)', async () => {
      let now = 0;
      const history = new RequestHistory(600_000, 3_600_000, () => now);
      for (let i = 0; i <= 8; i++, now += 600_000) await history.sample();
      const { points, step_seconds, window_seconds } = history.view();
      expect([step_seconds, window_seconds]).toEqual([600, 3600]);
      expect(points.length).toBe(7);
      expect(points.at(-1)).toMatchObject({ requests: 0, mean_ms: null, p95_ms: null });
    });
  });

  describe('quantileMs', () => {
    it('should interpolate within the bucket that holds the rank, and stop at the last finite bound', () => {
      const after = new Map([
        [0.1, 50],
        [0.2, 100],
        [Infinity, 100],
      ]);
      expect(quantileMs(new Map(), after, 100, 0.75)).toBeCloseTo(150, 6);
      expect(
        quantileMs(
          new Map(),
          new Map([
            [0.1, 0],
            [Infinity, 10],
          ]),
          10,
          0.95,
        ),
      ).toBe(100);
    });
  });
});
