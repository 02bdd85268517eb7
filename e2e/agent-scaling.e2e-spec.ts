import { describeWithNats, describeWithRedis, testServers } from '#testing';
import { measureTurnScaling } from '../bench/agents.bench.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

describeNats('agent-runtime scaling (NATS queue group, Redis state, loopback model with fixed latency)', () => {
  describeRedis('turns/s with 1, 2 and 4 workers', () => {
    it('should scale near-linearly: 4 workers at least 3.5x one', async () => {
      const rows = await measureTurnScaling(testServers.natsUrl, testServers.redisUrl, { workers: [1, 2, 4], sessions: 64, warmupMs: 2_000, windowMs: 6_000, modelLatencyMs: 500, perWorker: 4 });
      console.log(rows.map((r) => `${r.workers} worker(s): ${r.turnsPerSecond} turns/s (p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors)`).join('\n'));
      expect(rows.every((r) => r.errors === 0)).toBe(true);
      const [one, two, four] = rows.map((r) => r.turnsPerSecond) as [number, number, number];
      expect(two / one).toBeGreaterThanOrEqual(1.8);
      expect(four / one).toBeGreaterThanOrEqual(3.5);
    }, 180_000);
  });
});
