import { describeWithNats, describeWithRedis } from '#testing';
import { client } from './harness.js';
import {
  named,
  startAgentSystem,
  startWorker,
  stopBuiltInWorker,
  streamTurn,
  type AgentSystem,
} from './agent-harness.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

/** SIGTERM of an agent worker drains: its running turn finishes within the shutdown deadline instead of failing. */
describeNats('agent worker shutdown (NATS + Redis, loopback model)', () => {
  describeRedis('drain', () => {
    let sys: AgentSystem;
    beforeAll(async () => {
      sys = await startAgentSystem('nats');
      await stopBuiltInWorker(sys);
    }, 60_000);
    afterAll(() => sys?.stop());

    it('should finish the running turn, then stop, when the worker is told to shut down mid-turn', async () => {
      const worker = await startWorker(sys, 'draining-worker', { ALFRED_SHUTDOWN_DEADLINE_MS: '20000' });
      const api = client(sys.url);
      const id = (await api.post('/sessions', {})).body.id;
      sys.model.script({ content: [{ type: 'text', text: 'finished after the signal' }], delayMs: 2_000 });
      let stopped: Promise<void> | undefined;
      const { events } = await streamTurn(sys.url, id, 'take your time', {}, async (e) => {
        if (e.event === 'started') stopped = worker.stop();
      });
      expect(stopped).toBeDefined();
      await stopped;
      expect(named(events, 'done')[0]).toMatchObject({ status: 'completed' });
      expect(named(events, 'error')).toEqual([]);
      // The drained worker is gone: another one serves the session, which holds the turn's answer.
      const reader = await startWorker(sys, 'reader');
      try {
        const messages = (await api.get(`/sessions/${id}`)).body.messages as Array<{ role: string; content: unknown }>;
        expect(JSON.stringify(messages.at(-1))).toContain('finished after the signal');
      } finally {
        await reader.stop();
      }
    }, 60_000);

    it('should give a running turn the whole shutdown deadline (less closing), not 60% of it', async () => {
      // 5 s deadline: the turn needs 3.8 s after the signal, past the old 3 s (0.6x) and within 4.5 s (5 s less 0.5 s).
      const worker = await startWorker(sys, 'deadline-worker', { ALFRED_SHUTDOWN_DEADLINE_MS: '5000' });
      const api = client(sys.url);
      const id = (await api.post('/sessions', {})).body.id;
      sys.model.script({ content: [{ type: 'text', text: 'finished near the deadline' }], delayMs: 3_800 });
      let stopped: Promise<void> | undefined;
      const { events } = await streamTurn(sys.url, id, 'take most of the deadline', {}, async (e) => {
        if (e.event === 'started') stopped = worker.stop();
      });
      await stopped;
      expect(named(events, 'error')).toEqual([]);
      expect(named(events, 'done')[0]).toMatchObject({ status: 'completed' });
    }, 60_000);
  });
});
