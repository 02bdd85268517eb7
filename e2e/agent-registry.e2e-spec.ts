import { describeWithNats, describeWithRedis } from '#testing';
import { client } from './harness.js';
import { startAgentSystem, stopBuiltInWorker, type AgentSystem } from './agent-harness.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

/**
 * Whether an agent exists and what its policy permits is read from the shared agent registry, so requests acting as a
 * named agent are served while agent-runtime is down.
 */
describeNats('agents known without agent-runtime (NATS + Redis)', () => {
  describeRedis('with the agent registry in a KV bucket', () => {
    let sys: AgentSystem;
    beforeAll(async () => {
      sys = await startAgentSystem('nats');
      const api = client(sys.url);
      expect(
        (await api.post('/agents', { name: 'scout', policy: { skills: { allow: ['*'], deny: ['remember'] } } })).status,
      ).toBe(201);
      await stopBuiltInWorker(sys);
    }, 60_000);
    afterAll(() => sys?.stop());

    it("should serve a named agent's memories while agent-runtime is stopped, and refuse unknown agents", async () => {
      const scout = client(sys.url, { 'x-alfred-agent': 'scout' });
      const created = await scout.post('/memories', { content: 'written while agent-runtime is down' });
      expect(created.status).toBe(201);
      expect((await scout.get(`/memories/${created.body.id}`)).body.content).toBe(
        'written while agent-runtime is down',
      );
      const unknown = await client(sys.url, { 'x-alfred-agent': 'nobody' }).post('/memories', { content: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({
        code: 'NOT_FOUND',
        details: { resource: 'agent', id: 'nobody', create_with: { method: 'POST', path: '/agents' } },
      });
    });

    it("should hold the agent to the registry's policy on the REST API", async () => {
      const scout = client(sys.url, { 'x-alfred-agent': 'scout' });
      expect((await scout.get('/skills/remember')).status).toBe(403);
      expect((await scout.get('/skills/recall')).status).toBe(200);
      expect((await client(sys.url).get('/skills/remember')).status).toBe(200);
    });
  });
});
