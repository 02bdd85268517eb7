import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { closeReserveMs, drainWindowMs, markStopping } from './shutdown-deadline.js';

describe('shutdown deadline', () => {
  describe(drainWindowMs.name, () => {
    it('should let work in flight run until the deadline less the close reserve, not a fraction of it', () => {
      expect(closeReserveMs(10_000)).toBe(1_000);
      expect(closeReserveMs(20_000)).toBe(1_000);
      expect(closeReserveMs(3_000)).toBe(300);
      // Before any stop signal, measured from now (a host stopping its services itself).
      expect(drainWindowMs(10_000, 5_000)).toBe(9_000);
    });

    it('should measure every drain from the stop signal, so drains one after another share one deadline', () => {
      markStopping(100_000);
      expect(drainWindowMs(10_000, 100_000)).toBe(9_000);
      expect(drainWindowMs(10_000, 104_000)).toBe(5_000);
      expect(drainWindowMs(10_000, 112_000)).toBe(0);
    });
  });

  describe('docker-compose.yml', () => {
    const seconds = (d: string) =>
      [...d.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)].reduce(
        (sum, [, n, u]) => sum + Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[u as 'ms'],
        0,
      );

    it('should give every Alfred service a stop grace past its shutdown deadline: Docker never kills a drain', () => {
      const compose = parse(readFileSync(new URL('../../../docker-compose.yml', import.meta.url), 'utf8'), {
        merge: true,
      }) as {
        services: Record<string, { stop_grace_period?: string; environment?: Record<string, string> }>;
      };
      const ours = Object.entries(compose.services).filter(
        ([, s]) => s.environment?.ALFRED_SHUTDOWN_DEADLINE_MS !== undefined,
      );
      expect(ours.length).toBeGreaterThan(5);
      for (const [name, s] of ours) {
        const deadline = Number(s.environment!.ALFRED_SHUTDOWN_DEADLINE_MS) / 1000;
        // Docker's default grace is 10 s.
        const grace = s.stop_grace_period ? seconds(s.stop_grace_period) : 10;
        expect(`${name} ${grace > deadline}`).toBe(`${name} true`);
      }
    });
  });
});
