import { randomUUID } from 'node:crypto';
import { pollUntil, testServers } from '#testing';
import { client, createAgents, startSystem, type Client, type Mode, type TestSystem } from './harness.js';

/** The env a mode needs for the capability stores: Redis (unique key prefix) in the distributed shape. */
export function capabilityEnv(mode: Mode): Record<string, string> {
  return mode === 'nats'
    ? { REDIS_URL: testServers.redisUrl, ALFRED_REDIS_PREFIX: `e2e-${randomUUID().slice(0, 8)}:` }
    : {};
}

const as = (agent: string, extra: Record<string, string> = {}) => ({ 'x-alfred-agent': agent, ...extra });

const toolPair = (id: string, name: string, input: Record<string, unknown>, result: string) => [
  { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: result }] },
];

/** A long conversation: chatter, a skill load early on, a tool call, more chatter. */
export function longConversation(turns = 12): unknown[] {
  const chatter = (i: number) => [
    {
      role: 'user',
      content: `Question ${i}: how should the deploy script handle step ${i}? It matters for the release.`,
    },
    { role: 'assistant', content: `Answer ${i}: run step ${i} after the migrations. Then check the logs for errors.` },
  ];
  return [
    ...chatter(0),
    ...toolPair(
      'toolu_skill_1',
      'load_skill',
      { name: 'deploy' },
      '# Deploy skill\nAlways run migrations before restarting the service.',
    ),
    ...Array.from({ length: turns }, (_, i) => chatter(i + 1)).flat(),
    ...toolPair('toolu_bash_1', 'bash', { command: 'ls' }, 'deploy.sh\nREADME.md'),
    ...chatter(99),
  ];
}

/** The capability endpoints and sessions/jobs/agent files, end to end, in one of the two ways Alfred runs. */
export function capabilitiesSuite(mode: Mode): void {
  let system: TestSystem;
  let api: Client;

  beforeAll(async () => {
    system = await startSystem(mode, capabilityEnv(mode));
    api = client(system.url);
    await createAgents(system.url, [
      'compact',
      'compact-owner',
      'compact-thief',
      'distiller',
      'editor',
      'empty-agent',
      'intruder',
      'learner',
      'owner',
      'refused',
      'restorer',
      'sess',
      'sess-bad',
      'sess-conc',
      'unsure',
    ]);
  }, 60_000);
  afterAll(async () => system?.stop());

  const newSession = async (agent: string, messages: unknown[] = []) => {
    const created = await api.post('/sessions', {}, as(agent));
    expect(created.status).toBe(201);
    if (messages.length > 0)
      expect((await api.post(`/sessions/${created.body.id}/messages`, { messages }, as(agent))).status).toBe(200);
    return created.body.id as string;
  };

  describe('sessions', () => {
    it('should create, append to, read, list and delete a session', async () => {
      const id = await newSession('sess');
      const appended = await api.post(
        `/sessions/${id}/messages`,
        { messages: [{ role: 'user', content: 'hello' }] },
        as('sess'),
      );
      expect(appended.body).toMatchObject({ id, appended: 1, message_count: 1 });
      const read = await api.get(`/sessions/${id}`, as('sess'));
      expect(read.body).toMatchObject({ id, agent: 'sess', messages: [{ role: 'user', content: 'hello' }] });
      expect((await api.get('/sessions', as('sess'))).body.sessions.map((s: { id: string }) => s.id)).toContain(id);
      expect((await api.delete(`/sessions/${id}`, undefined, as('sess'))).body).toEqual({ id, deleted: true });
      expect((await api.get(`/sessions/${id}`, as('sess'))).status).toBe(404);
    });

    it('should keep every message of concurrent appends', async () => {
      const id = await newSession('sess-conc');
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api.post(`/sessions/${id}/messages`, { messages: [{ role: 'user', content: `m${i}` }] }, as('sess-conc')),
        ),
      );
      expect((await api.get(`/sessions/${id}`, as('sess-conc'))).body.message_count).toBe(20);
    });

    it.each([
      ['an empty message list', { messages: [] }, 400],
      [
        'a tool_result from the assistant',
        { messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'x' }] }] },
        400,
      ],
      ['an unknown role', { messages: [{ role: 'system', content: 'x' }] }, 400],
    ])('should refuse %s', async (_what, body, status) => {
      const id = await newSession('sess-bad');
      const res = await api.post(`/sessions/${id}/messages`, body, as('sess-bad'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    });

    it("should answer 404 for another agent's session", async () => {
      const id = await newSession('owner');
      expect((await api.get(`/sessions/${id}`, as('intruder'))).status).toBe(404);
      expect(
        (await api.post(`/sessions/${id}/messages`, { messages: [{ role: 'user', content: 'x' }] }, as('intruder')))
          .status,
      ).toBe(404);
    });
  });

  describe('POST /compact', () => {
    it('should fold old messages into an extractive summary, keeping recent ones, tool pairs, skill text', async () => {
      const id = await newSession('compact', longConversation());
      const before = (await api.get(`/sessions/${id}`, as('compact'))).body;
      const res = await api.post('/compact', { preserve_recent: 3 }, as('compact', { 'x-alfred-session': id }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'completed', token_source: 'estimate' });
      expect(res.body.messages_compacted).toBeGreaterThan(10);
      expect(res.body.tokens_saved).toBe(res.body.tokens_before - res.body.tokens_after);
      expect(res.body.tokens_after).toBeLessThan(res.body.tokens_before);
      expect(res.body.summary).toMatch(/extractive: no language model is configured/);
      const after = (await api.get(`/sessions/${id}`, as('compact'))).body;
      expect(after.messages[0].content).toBe(res.body.summary);
      expect(JSON.stringify(after.messages)).toContain('Always run migrations before restarting the service.');
      // the cut moved back so the bash tool call stays with its result
      expect(after.messages.slice(-4)).toEqual(before.messages.slice(-4));
      expect(after.version).toBe(res.body.session_version);
    });

    it('should be a no-op for a short session', async () => {
      const id = await newSession('compact', [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]);
      const res = await api.post('/compact', { session_id: id }, as('compact'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ messages_compacted: 0, tokens_saved: 0 });
    });

    it.each([
      ['no session named', {}, {}, 400, 'BAD_REQUEST'],
      ['an unknown session', { session_id: 'no-such-session' }, {}, 404, 'NOT_FOUND'],
      ['a negative preserve_recent', { session_id: 'x', preserve_recent: -1 }, {}, 422, 'VALIDATION_FAILED'],
      ['an unknown field', { session_id: 'x', everything: true }, {}, 400, 'BAD_REQUEST'],
      [
        'body and header naming different sessions',
        { session_id: 'a' },
        { 'x-alfred-session': 'b' },
        400,
        'BAD_REQUEST',
      ],
    ])('should refuse %s', async (_what, body, headers, status, code) => {
      const res = await api.post('/compact', body, as('compact', headers));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
    });

    it("should answer 404 for another agent's session and leave it as it was", async () => {
      const id = await newSession('compact-owner', longConversation());
      const res = await api.post('/compact', { session_id: id, preserve_recent: 2 }, as('compact-thief'));
      expect(res.status).toBe(404);
      expect((await api.get(`/sessions/${id}`, as('compact-owner'))).body.version).toBe(1);
    });
  });

  describe('POST /learn and the agent files', () => {
    it('should update USER.md, name the backup, and answer no_change when it already says so', async () => {
      const body = { target: 'user', observation: 'Prefers TypeScript over JavaScript', confidence: 0.9 };
      const first = await api.post('/learn', body, as('learner'));
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        status: 'updated',
        file: 'USER.md',
        backup_created: 'USER.md@v1',
        version: 2,
      });
      expect(first.body.changes[0]).toMatch(/Prefers TypeScript/);
      const again = await api.post(
        '/learn',
        { ...body, observation: 'prefers typescript over javascript.' },
        as('learner'),
      );
      expect(again.body).toMatchObject({ status: 'no_change', file: 'USER.md' });
      expect(again.body.reason).toMatch(/already/);
      const file = await api.get('/agents/learner/files/USER.md');
      expect(file.body).toMatchObject({ agent: 'learner', file: 'user', version: 2 });
      expect(file.body.content).toContain('- Prefers TypeScript over JavaScript');
    });

    it('should record a low-confidence observation without changing the file', async () => {
      const res = await api.post(
        '/learn',
        { target: 'soul', observation: 'Maybe use more emoji', confidence: 0.2 },
        as('unsure'),
      );
      expect(res.body).toMatchObject({ status: 'no_change', file: 'SOUL.md', pending_memory_id: expect.any(String) });
      expect((await api.get('/agents/unsure/files/soul')).body.version).toBe(0);
      const pending = await api.get(`/memories/${res.body.pending_memory_id}`, as('unsure'));
      expect(pending.body.tags).toContain('pending-observation');
    });

    it.each([
      ['a bad target', { target: 'memory', observation: 'x' }, 400, 'INVALID_TARGET'],
      ['a missing target', { observation: 'x' }, 400, 'INVALID_TARGET'],
      ['an empty observation', { target: 'user', observation: '' }, 422, 'INVALID_OBSERVATION'],
      ['a blank observation', { target: 'user', observation: '   ' }, 422, 'INVALID_OBSERVATION'],
      ['a missing observation', { target: 'soul' }, 422, 'INVALID_OBSERVATION'],
      ['a confidence above 1', { target: 'user', observation: 'x', confidence: 1.5 }, 422, 'VALIDATION_FAILED'],
    ])('should refuse %s and change nothing', async (_what, body, status, code) => {
      const res = await api.post('/learn', body, as('refused'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect((await api.get('/agents/refused/files/user/history')).body.versions).toEqual([]);
    });

    it('should list history and restore an earlier version', async () => {
      await api.post('/learn', { target: 'soul', observation: 'Keep answers short' }, as('restorer'));
      await api.post('/learn', { target: 'soul', observation: 'Ask before deleting files' }, as('restorer'));
      const history = await api.get('/agents/restorer/files/soul/history');
      expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
      const v2 = (await api.get('/agents/restorer/files/soul/history/2')).body;
      expect(v2).toMatchObject({
        agent: 'restorer',
        file: 'soul',
        version: 2,
        reason: expect.stringContaining('Keep answers short'),
      });
      expect(v2.content).toContain('Keep answers short');
      expect((await api.get('/agents/restorer/files/soul/history/9')).status).toBe(404);
      expect((await api.get('/agents/restorer/files/soul/history/x')).status).toBe(404);
      const restored = await api.post('/agents/restorer/files/SOUL.md/restore', { version: 2 });
      expect(restored.body).toEqual({ agent: 'restorer', file: 'soul', version: 4, restored_from: 2 });
      const file = (await api.get('/agents/restorer/files/soul')).body.content;
      expect(file).toContain('Keep answers short');
      expect(file).not.toContain('Ask before deleting files');
    });

    it('should save a hand edit as a version naming its writer, refusing a stale one with the newer text', async () => {
      const opened = (await api.get('/agents/editor/files/SOUL.md')).body;
      expect(opened.version).toBe(0);
      const saved = await api.put(
        '/agents/editor/files/SOUL.md',
        { content: '# SOUL.md\n\nCalm and brief.\n', expected_version: 0 },
        { 'x-alfred-source': 'console' },
      );
      expect(saved.status).toBe(200);
      // The default text became version 1, so the edit (version 2) can be compared and undone.
      expect(saved.body).toMatchObject({ agent: 'editor', file: 'soul', version: 2, previous_version: 1 });
      const history = (await api.get('/agents/editor/files/soul/history')).body.versions;
      expect(history.map((v: { version: number; reason: string }) => [v.version, v.reason])).toEqual([
        [2, 'edited by hand'],
        [1, 'initial content'],
      ]);
      expect(history[0].writer).toMatchObject({ via: 'rest', source: 'console', key: expect.any(String) });

      // Another writer moved the file on: the editor's save from version 2 loses and learns what won.
      expect(
        (await api.put('/agents/editor/files/soul', { content: 'Cheerful.\n', expected_version: 2, reason: 'tone' }))
          .status,
      ).toBe(200);
      const stale = await api.put('/agents/editor/files/soul', { content: 'Grumpy.\n', expected_version: 2 });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('CONFLICT');
      expect(stale.body.error.details).toMatchObject({
        expected_version: 2,
        version: 3,
        current: { version: 3, content: 'Cheerful.\n' },
      });
      expect((await api.get('/agents/editor/files/soul')).body).toMatchObject({ version: 3, content: 'Cheerful.\n' });

      // A restore that started from a version that is no longer current is refused the same way.
      const restore = await api.post('/agents/editor/files/soul/restore', { version: 1, expected_version: 2 });
      expect(restore.status).toBe(409);
      expect(restore.body.error.details.current.content).toBe('Cheerful.\n');
    });

    it.each([
      [
        'a credential',
        'soul',
        { content: `Deploy with ${'postgres://app:Sup3rS3cretPw@db.internal:5432/prod'}`, expected_version: 0 },
        422,
        'SECRET_DETECTED',
      ],
      ['MEMORY.md', 'memory', { content: 'x', expected_version: 0 }, 400, 'BAD_REQUEST'],
      ['no expected_version', 'user', { content: 'x' }, 400, 'BAD_REQUEST'],
      ['a text over the limit', 'user', { content: 'x'.repeat(1_000_001), expected_version: 0 }, 400, 'BAD_REQUEST'],
    ])('should refuse an edit with %s and change nothing', async (_what, file, body, status, code) => {
      const res = await api.put(`/agents/refused/files/${file}`, body);
      expect([res.status, res.body.error.code]).toEqual([status, code]);
      expect((await api.get(`/agents/refused/files/${file}/history`)).body.versions).toEqual([]);
    });

    it.each([
      ['an unknown file', 'get', '/agents/a/files/notes.md', undefined, 404, 'NOT_FOUND'],
      ['a bad agent name', 'get', '/agents/Bad_Agent/files/user', undefined, 400, 'BAD_REQUEST'],
      ['a version never written', 'post', '/agents/a/files/user/restore', { version: 7 }, 404, 'NOT_FOUND'],
      ['version 0', 'post', '/agents/a/files/user/restore', { version: 0 }, 422, 'VALIDATION_FAILED'],
    ])('should refuse %s', async (_what, method, path, body, status, code) => {
      const res = method === 'get' ? await api.get(path) : await api.post(path, body);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
    });
  });

  describe('POST /distill and GET /jobs/{id}', () => {
    const remember = (agent: string, content: string, importance = 0.6) =>
      api.post('/memories', { content, importance }, as(agent));

    it('should add recurring insights to MEMORY.md and as memories, once', async () => {
      await remember('distiller', 'User prefers dark mode in every editor', 0.7);
      await remember('distiller', 'User prefers dark mode in the terminal too', 0.6);
      await remember('distiller', 'Dark mode preferred by the user for the editor', 0.5);
      await remember('distiller', 'Had pasta for lunch', 0.1);
      const res = await api.post('/distill', { scope: 'all' }, as('distiller'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'completed',
        insights_added: 1,
        memory_file: 'MEMORY.md',
        processed_memories: 4,
      });
      expect(res.body.duration_ms).toEqual(expect.any(Number));
      const file = (await api.get('/agents/distiller/files/memory')).body.content;
      expect(file).toMatch(/User prefers dark mode in every editor \(seen 3 times\) <!-- insight:[0-9a-f]{12} -->/);
      const again = await api.post('/distill', { scope: 'all' }, as('distiller'));
      expect(again.body).toMatchObject({ status: 'completed', insights_added: 0 });
      const stored = await api.get('/memories?source=memory', as('distiller'));
      expect(stored.body.pagination.total).toBe(1);
      expect(stored.body.memories[0].tags).toContain('insight');
    });

    it('should answer with the distill result shape for an agent without memories', async () => {
      const res = await api.post('/distill', {}, as('empty-agent'));
      expect(res.body).toMatchObject({ status: 'completed', insights_added: 0, processed_memories: 0 });
    });

    it.each([
      ['an unknown scope', { scope: 'some' }, 400],
      ['a malformed since', { since: 'yesterday' }, 400],
      ['an empty focus', { focus: '' }, 400],
      ['an unknown field', { scope: 'all', deep: true }, 400],
    ])('should refuse %s', async (_what, body, status) => {
      const res = await api.post('/distill', body, as('distiller'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    });

    it.each([
      ['a malformed job id', '/jobs/nope'],
      ['an unknown job id', `/jobs/job-distill-${'0'.repeat(32)}`],
    ])('should answer 404 for %s', async (_what, path) => {
      const res = await api.get(path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('GET /', () => {
    it('should list the capability endpoints', async () => {
      const paths = (await api.get('/')).body.endpoints.map((e: { path: string }) => e.path);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/distill',
          '/learn',
          '/compact',
          '/sessions',
          '/jobs/{id}',
          '/agents/{agent}/files/{file}',
        ]),
      );
    });
  });
}

/** Polls a job until it is finished. */
export async function finishedJob(api: Client, id: string, agent: string, timeoutMs = 15_000) {
  let body: any;
  await pollUntil(
    async () => {
      body = (await api.get(`/jobs/${id}`, as(agent))).body;
      return body.status === 'completed' || body.status === 'failed';
    },
    timeoutMs,
    `job ${id}`,
  );
  return body;
}
