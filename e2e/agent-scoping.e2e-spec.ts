import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { keyToken } from '#kv';
import { SESSIONS_BUCKET } from '#sessions';
import { deleteRedisKeysWithPrefix, describeWithNats, describeWithRedis, testServers } from '#testing';
import { client, startSystem, type Client, type Mode, type TestSystem } from './harness.js';

const distributed = (await describeWithNats()) === describe && (await describeWithRedis()) === describe;
const MODES: Mode[] = distributed ? ['embedded', 'nats'] : ['embedded'];
const as = (agent: string) => ({ 'x-alfred-agent': agent });

/** Everything an agent owns exists only while the agent does, and goes with it. */
describe.each<Mode>(MODES)('agent scoping (%s)', (mode) => {
  let system: TestSystem;
  let api: Client;

  const prefix = `e2e-scoping-${process.pid}-${Date.now()}:`;
  beforeAll(async () => {
    system = await startSystem(
      mode,
      mode === 'nats' ? { REDIS_URL: testServers.redisUrl, ALFRED_REDIS_PREFIX: prefix } : {},
    );
    api = client(system.url);
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
    if (mode === 'nats') await deleteRedisKeysWithPrefix(testServers.redisUrl, prefix);
  });

  it('should refuse anything for an agent that does not exist, saying how to create it', async () => {
    for (const res of [
      await api.post('/sessions', {}, as('ghost')),
      await api.post('/sessions', { agent: 'ghost' }),
      await api.post('/memories', { content: 'x' }, as('ghost')),
      await api.post('/checkpoints', { name: 'c', summary: 's' }, as('ghost')),
      await api.get('/agents/ghost/files/user'),
      await api.get('/sessions?agent=ghost'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain('POST /agents');
    }
    expect((await api.post('/memories', { content: 'alfred always exists' })).status).toBe(201);
  });

  it('should let a session imply its agent, and say whose session it is', async () => {
    expect((await api.post('/agents', { name: 'jarvis' })).status).toBe(201);
    const id = (await api.post('/sessions', { agent: 'jarvis' })).body.id as string;

    expect((await api.get(`/sessions/${id}`)).body).toMatchObject({ id, agent: 'jarvis' });
    expect((await api.post(`/sessions/${id}/messages`, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(
      200,
    );
    expect((await api.post('/compact', { session_id: id })).status).toBe(200);
    const other = await api.get(`/sessions/${id}`, as('alfred'));
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain('belongs to agent jarvis');
    expect((await api.get('/sessions?agent=jarvis')).body.sessions.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await api.get('/sessions?agent=jarvis', as('alfred'))).status).toBe(400);
  });

  it('should delete everything an agent owned with it, and nothing of another', async () => {
    expect((await api.post('/agents', { name: 'temp' })).status).toBe(201);
    const sid = (await api.post('/sessions', {}, as('temp'))).body.id as string;
    await api.post(`/sessions/${sid}/messages`, { messages: [{ role: 'user', content: 'note' }] });
    expect((await api.post('/memories', { content: 'temp fact' }, as('temp'))).status).toBe(201);
    expect(
      (await api.post('/checkpoints', { name: 'wip', summary: 'half done', session_id: sid }, as('temp'))).status,
    ).toBe(201);
    expect(
      (await api.post('/remediations', { error_message: 'EADDRINUSE', fix: 'free the port' }, as('temp'))).status,
    ).toBe(201);
    expect(
      (await api.post('/learn', { target: 'user', observation: 'Likes tea', confidence: 0.9 }, as('temp'))).status,
    ).toBe(200);
    expect((await api.post('/memories', { content: 'alfred keeps this' })).status).toBe(201);

    const res = await api.delete('/agents/temp?confirm=temp');

    expect(res.body).toMatchObject({
      deleted: true,
      memories_deleted: 1,
      sessions_deleted: 1,
      checkpoints_deleted: 1,
      remediations_deleted: 1,
    });
    expect(res.body.files_deleted).toBeGreaterThan(0);
    expect((await api.get(`/sessions/${sid}`)).status).toBe(404);
    // Created again, it starts empty: nothing of the old one is left anywhere.
    expect((await api.post('/agents', { name: 'temp' })).status).toBe(201);
    expect((await api.get('/memories', as('temp'))).body.memories).toEqual([]);
    expect((await api.get('/checkpoints', as('temp'))).body.checkpoints).toEqual([]);
    expect((await api.get('/remediations/search?q=EADDRINUSE', as('temp'))).body.results).toEqual([]);
    expect((await api.get('/sessions', as('temp'))).body.sessions).toEqual([]);
    expect((await api.get('/memories')).body.memories.map((m: { content: string }) => m.content)).toContain(
      'alfred keeps this',
    );
    if (mode === 'embedded')
      expect(await readdir(join(system.dataDir, 'kv', SESSIONS_BUCKET, 's', keyToken('default')))).not.toContain(
        'temp',
      );
  });
});
