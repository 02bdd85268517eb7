import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describeWithNats, describeWithRedis, pollUntil } from '#testing';
import { client, type Client } from './harness.js';
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
const repo = new URL('..', import.meta.url).pathname;

/** The built agent-runtime as its own process (a real process, so it can be killed mid-turn). */
function spawnWorker(sys: AgentSystem, name: string): Promise<ChildProcess> {
  const env = {
    ...sys.env,
    PATH: process.env.PATH,
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    ALFRED_SUBJECT_PREFIX: sys.subjectPrefix!,
    ALFRED_LOG_LEVEL: 'info',
  };
  const child = spawn(process.execPath, [join(repo, 'dist/services/agent-runtime/src/main.js')], {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('service started')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output}`)));
  });
}

describeNats('agent turns across workers (NATS + Redis, loopback model)', () => {
  describeRedis('with sessions, leases and turn state in Redis', () => {
    let sys: AgentSystem;
    let api: Client;
    const workers: Array<{ stop(): Promise<void> }> = [];

    beforeAll(async () => {
      const env = { ALFRED_TURN_HEARTBEAT_MS: '200', ALFRED_TURN_LEASE_MS: '1500' };
      sys = await startAgentSystem('nats', env);
      api = client(sys.url);
      await stopBuiltInWorker(sys);
      for (const name of ['worker-a', 'worker-b', 'worker-c']) workers.push(await startWorker(sys, name, env));
    }, 60_000);
    afterAll(async () => {
      for (const w of workers) await w.stop();
      await sys?.stop();
    });
    beforeEach(() => sys.model.clear());

    it('should deliver a confirmation answered through any worker to the worker running the turn', async () => {
      const seen: Array<{ turnWorker: string; confirmWorker: string }> = [];
      for (let i = 0; i < 12 && !seen.some((s) => s.turnWorker !== s.confirmWorker); i++) {
        const id = (await api.post('/sessions', {})).body.id;
        sys.model.script(
          {
            content: [{ type: 'tool_use', name: 'activate_skill', input: { name: 'recall' } }],
            stopReason: 'tool_use',
          },
          { content: [{ type: 'text', text: 'done' }] },
        );
        let turnWorker = '';
        const { events } = await streamTurn(sys.url, id, 'activate recall', {}, async (e) => {
          if (e.event === 'started') turnWorker = e.data.worker;
          if (e.event !== 'confirmation_request') return;
          const res = await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: true });
          expect(res.status).toBe(200);
          seen.push({ turnWorker, confirmWorker: res.body.worker });
        });
        expect(named(events, 'tool_result')[0]).toMatchObject({ is_error: false });
        expect((await api.get(`/sessions/${id}`)).body.active_skill).toBe('recall');
      }
      expect(seen.some((s) => s.turnWorker !== s.confirmWorker)).toBe(true);
    }, 60_000);

    it('should cancel a turn from any worker', async () => {
      const id = (await api.post('/sessions', {})).body.id;
      sys.model.script({ content: [{ type: 'text', text: 'late' }], delayMs: 20_000 });
      const { events } = await streamTurn(sys.url, id, 'slow', {}, async (e) => {
        if (e.event === 'started') expect((await api.delete(`/sessions/${id}/turns/current`)).status).toBe(200);
      });
      expect(named(events, 'done')[0].status).toBe('cancelled');
    }, 30_000);

    it('should run one turn per session at a time across workers: the second gets 409', async () => {
      const id = (await api.post('/sessions', {})).body.id;
      sys.model.script({ content: [{ type: 'text', text: 'first' }], delayMs: 800 });
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const first = streamTurn(sys.url, id, 'one', {}, (e) => void (e.event === 'started' && started()));
      await running;
      const answers = await Promise.all(
        [1, 2, 3].map(() => api.post(`/sessions/${id}/turns`, { message: 'again', stream: false })),
      );
      expect(answers.map((a) => a.status)).toEqual([409, 409, 409]);
      expect(named((await first).events, 'done')[0].status).toBe('completed');
      sys.model.reply('second');
      expect((await api.post(`/sessions/${id}/turns`, { message: 'now', stream: false })).body.status).toBe(
        'completed',
      );
      expect((await api.get(`/sessions/${id}`)).body.message_count).toBe(4);
    }, 30_000);

    it("should report a killed worker's turn failed, write nothing, and free the session after the lease", async () => {
      execFileSync(
        process.execPath,
        [join(repo, 'node_modules/typescript/bin/tsc'), '-p', join(repo, 'tsconfig.build.json')],
        { stdio: 'inherit' },
      );
      const child = await spawnWorker(sys, 'doomed');
      for (const w of workers.splice(0)) await w.stop();
      try {
        const id = (await api.post('/sessions', {})).body.id;
        sys.model.script(
          { content: [{ type: 'tool_use', name: 'bash', input: { command: 'echo one' } }], stopReason: 'tool_use' },
          { content: [{ type: 'text', text: 'never' }], delayMs: 30_000 },
        );
        const { events } = await streamTurn(sys.url, id, 'work', {}, (e) => {
          if (e.event === 'tool_result') child.kill('SIGKILL');
        });
        expect(named(events, 'error')[0].error.code).toBe('TURN_LOST');
        expect(named(events, 'done')[0].status).toBe('failed');
        workers.push(
          await startWorker(sys, 'worker-d', { ALFRED_TURN_HEARTBEAT_MS: '200', ALFRED_TURN_LEASE_MS: '1500' }),
        );
        expect((await api.get(`/sessions/${id}`)).body).toMatchObject({ version: 0, message_count: 0 });
        sys.model.clear();
        sys.model.reply('fresh start');
        let res = await api.post(`/sessions/${id}/turns`, { message: 'retry', stream: false });
        await pollUntil(
          async () => {
            if (res.status !== 409) return true;
            res = await api.post(`/sessions/${id}/turns`, { message: 'retry', stream: false });
            return res.status !== 409;
          },
          5_000,
          'the dead worker lease to expire',
        );
        expect(res.body).toMatchObject({ status: 'completed', text: 'fresh start' });
        expect((await api.get(`/sessions/${id}`)).body.message_count).toBe(2);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    }, 180_000);
  });
});
