import { client, createAgents, startSystem, type Client, type Mode, type TestSystem } from './harness.js';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';

const as = (agent: string) => ({ 'x-alfred-agent': agent });

/** The same error as seen on two machines: other paths, line numbers, ids and times. */
export const ALICE_ERROR = {
  error_message:
    "Error: Cannot find module '/home/alice/work/shop/node_modules/.pnpm/left-pad@1.3.0/index.js' imported " +
    'from /home/alice/work/shop/src/checkout.ts at 2025-03-01T10:00:00Z (request ' +
    '7f3c2a9e-1b4d-4c8e-9f00-2b1c3d4e5f60)',
  stack:
    '    at finalizeResolution (node:internal/modules/esm/resolve:275:11)\n    at checkout ' +
    '(/home/alice/work/shop/src/checkout.ts:42:7)',
  tool: 'node',
  fix: 'Run pnpm install: the lockfile changed and node_modules is stale.',
  tags: ['node', 'modules'],
};
export const BOB_ERROR =
  "Error: Cannot find module 'C:\\Users\\bob\\projects\\shop\\node_modules\\.pnpm\\left-pad@1.3.0\\index.js' " +
  'imported from C:\\Users\\bob\\projects\\shop\\src\\checkout.ts at 2026-11-20T23:59:01.512+01:00 ' +
  '(request 0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d)\n' +
  '    at finalizeResolution (node:internal/modules/esm/resolve:281:9)\n    at checkout ' +
  '(C:\\Users\\bob\\projects\\shop\\src\\checkout.ts:57:13)';

/** Feedback, checkpoints, remediations and recall over REST, identical in both ways Alfred runs. */
export function recallApiSuite(mode: Mode): void {
  let system: TestSystem;
  let dirs: SkillDirs;
  let api: Client;

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    system = await startSystem(mode, skillEnv(dirs, { ALFRED_SKILLS_WATCH: 'false' }));
    api = client(system.url);
    await createAgents(system.url, ['fixer', 'lister', 'mallory', 'ranking', 'recaller', 'validator']);
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
    await dirs?.remove();
  });

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };

  describe('POST /memories/{id}/feedback', () => {
    it('should count feedback in the memory record and its history', async () => {
      const { id } = (await api.post('/memories', { content: 'Deploys run from the release branch only' })).body;
      expect((await api.get(`/memories/${id}`)).body.feedback).toBeUndefined();
      const first = await api.post(`/memories/${id}/feedback`, { helpful: true, note: 'saved me a wrong deploy' });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ id, feedback: { helpful: 1, unhelpful: 0 } });
      await api.post(`/memories/${id}/feedback`, { helpful: false });
      expect((await api.get(`/memories/${id}`)).body.feedback).toEqual({ helpful: 1, unhelpful: 1 });
      const listed = (await api.get('/memories?limit=100')).body.memories.find((m: { id: string }) => m.id === id);
      expect(listed.feedback).toEqual({ helpful: 1, unhelpful: 1 });
      const history = (await api.get(`/memories/${id}/history`)).body.events;
      expect(history.map((e: { kind: string }) => e.kind)).toEqual(['created', 'feedback', 'feedback']);
      expect(history[1].feedback).toEqual({
        helpful: true,
        note: 'saved me a wrong deploy',
        counts: { helpful: 1, unhelpful: 0 },
      });
    });

    it('should flip two equally relevant memories in /search', async () => {
      const agent = 'ranking';
      const a = (await api.post('/memories', { content: 'Kettle descaling uses citric acid monthly' }, as(agent))).body
        .id;
      const b = (await api.post('/memories', { content: 'Kettle descaling uses citric acid monthly.' }, as(agent))).body
        .id;
      const order = async () =>
        (await api.get('/search?q=kettle%20descaling%20citric%20acid', as(agent))).body.results.map((r: any) => r.id);
      const before = await order();
      expect(before.sort()).toEqual([a, b].sort());
      const [top, second] = before;
      for (let i = 0; i < 2; i++) {
        expect((await api.post(`/memories/${top}/feedback`, { helpful: false }, as(agent))).status).toBe(200);
        expect((await api.post(`/memories/${second}/feedback`, { helpful: true }, as(agent))).status).toBe(200);
      }
      const after = (await api.get('/search?q=kettle%20descaling%20citric%20acid', as(agent))).body.results;
      expect(after.map((r: any) => r.id)).toEqual([second, top]);
      expect(after[0].feedback).toEqual({ helpful: 2, unhelpful: 0 });
      expect(after.every((r: any) => r.score >= 0 && r.score <= 1)).toBe(true);
    });

    it.each([
      ['a missing helpful', {}, 400, 'BAD_REQUEST'],
      ['helpful of the wrong type', { helpful: 'yes' }, 400, 'BAD_REQUEST'],
      ['an unknown field', { helpful: true, stars: 5 }, 400, 'BAD_REQUEST'],
    ])('should refuse %s', async (_what, body, status, code) => {
      const { id } = (await api.post('/memories', { content: 'feedback validation target' })).body;
      expectError(await api.post(`/memories/${id}/feedback`, body), status, code);
      expect((await api.get(`/memories/${id}`)).body.feedback).toBeUndefined();
    });

    it("should answer 404 for another agent's memory and leave it unchanged", async () => {
      const { id } = (await api.post('/memories', { content: 'private to alfred' })).body;
      expectError(await api.post(`/memories/${id}/feedback`, { helpful: false }, as('mallory')), 404, 'NOT_FOUND');
      expect((await api.get(`/memories/${id}`)).body.feedback).toBeUndefined();
    });
  });

  describe('/checkpoints', () => {
    let sessionId: string;
    const messages = [
      { role: 'user', content: 'Migrate the billing service to the new queue' },
      { role: 'assistant', content: 'I moved the producer; the consumer is next.' },
      { role: 'user', content: 'Also keep the old queue draining until Friday' },
      { role: 'assistant', content: 'Noted: dual-run until Friday.' },
    ];

    beforeAll(async () => {
      sessionId = (await api.post('/sessions', {})).body.id;
      expect((await api.post(`/sessions/${sessionId}/messages`, { messages })).status).toBe(200);
    });

    const save = async (body: Record<string, unknown>, agent = 'alfred') => {
      const res = await api.post('/checkpoints', body, as(agent));
      expect(res.status).toBe(201);
      return res.body;
    };

    it('should save a checkpoint with the session by reference and read it back', async () => {
      const cp = await save({
        name: 'billing-queue',
        session_id: sessionId,
        summary: 'Producer moved',
        done: ['producer'],
        next: ['consumer'],
        tags: ['billing'],
      });
      expect(cp).toMatchObject({ name: 'billing-queue', done: ['producer'], next: ['consumer'], tags: ['billing'] });
      expect(cp.session).toMatchObject({
        id: sessionId,
        message_count: 4,
        version: expect.any(Number),
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect((await api.get(`/checkpoints/${cp.id}`)).body).toEqual(cp);
    });

    it('should list newest first with pagination', async () => {
      const agent = 'lister';
      for (const name of ['one', 'two', 'three']) await save({ name, summary: `step ${name}` }, agent);
      const page = (await api.get('/checkpoints?limit=2', as(agent))).body;
      expect(page.checkpoints.map((c: { name: string }) => c.name)).toEqual(['three', 'two']);
      expect(page.pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
      const rest = (await api.get('/checkpoints?limit=2&offset=2', as(agent))).body;
      expect(rest.checkpoints.map((c: { name: string }) => c.name)).toEqual(['one']);
      expect(rest.pagination.has_more).toBe(false);
    });

    it.each([
      ['summary', 1],
      ['context', 5],
      ['full', 5],
    ])('should resume at level %s into a new session of %i messages', async (level, count) => {
      const cp = await save({
        name: `resume-${level}`,
        session_id: sessionId,
        summary: 'Producer moved',
        next: ['consumer'],
      });
      const res = await api.post(`/checkpoints/${cp.id}/resume`, { level });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ checkpoint_id: cp.id, level, message_count: count });
      const session = (await api.get(`/sessions/${res.body.session_id}`)).body;
      expect(session.messages).toHaveLength(count);
      expect(session.messages.at(-1).content).toContain('Resuming from checkpoint "resume-');
      expect(session.messages.at(-1).content).toContain('- consumer');
      if (count > 1) expect(session.messages.slice(0, 4)).toEqual(messages);
      expect(session.metadata.resumed_from).toMatchObject({ checkpoint_id: cp.id, level });
    });

    it('should refuse context and full with 409 once the session is gone, and still resume the summary', async () => {
      const doomed = (await api.post('/sessions', {})).body.id;
      await api.post(`/sessions/${doomed}/messages`, { messages: messages.slice(0, 2) });
      const cp = await save({ name: 'doomed', session_id: doomed, summary: 'about to vanish' });
      expect((await api.delete(`/sessions/${doomed}`)).status).toBe(200);
      for (const level of ['context', 'full']) {
        const res = await api.post(`/checkpoints/${cp.id}/resume`, { level });
        expectError(res, 409, 'CONFLICT');
        expect(res.body.error.details).toMatchObject({ reason: 'session_deleted', session_id: doomed });
        expect(res.body.error.message).toContain('summary');
      }
      expect((await api.post(`/checkpoints/${cp.id}/resume`, { level: 'summary' })).status).toBe(201);
    });

    it.each([
      ['an empty name', { name: '', summary: 's' }, 400, 'BAD_REQUEST'],
      ['a missing summary', { name: 'n' }, 400, 'BAD_REQUEST'],
      ['next of the wrong type', { name: 'n', summary: 's', next: 'later' }, 400, 'BAD_REQUEST'],
      ['a bad session id', { name: 'n', summary: 's', session_id: '../x' }, 400, 'BAD_REQUEST'],
      ['an unknown field', { name: 'n', summary: 's', colour: 1 }, 400, 'BAD_REQUEST'],
    ])('should refuse %s', async (_what, body, status, code) => {
      const res = await api.post('/checkpoints', body, as('validator'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect((await api.get('/checkpoints', as('validator'))).body.pagination.total).toBe(0);
    });

    it("should answer 404 for a missing session and for another agent's session or checkpoint", async () => {
      expectError(await api.post('/checkpoints', { name: 'n', summary: 's', session_id: 'nope' }), 404, 'NOT_FOUND');
      expectError(
        await api.post('/checkpoints', { name: 'n', summary: 's', session_id: sessionId }, as('mallory')),
        404,
        'NOT_FOUND',
      );
      const cp = await save({ name: 'mine', summary: 's' });
      expectError(await api.get(`/checkpoints/${cp.id}`, as('mallory')), 404, 'NOT_FOUND');
      expectError(
        await api.post(`/checkpoints/${cp.id}/resume`, { level: 'summary' }, as('mallory')),
        404,
        'NOT_FOUND',
      );
      expect((await api.get('/checkpoints', as('mallory'))).body.checkpoints).toEqual([]);
    });

    it('should refuse a bad level and bad list parameters', async () => {
      const cp = await save({ name: 'levels', summary: 's' });
      expectError(await api.post(`/checkpoints/${cp.id}/resume`, { level: 'everything' }), 400, 'BAD_REQUEST');
      expectError(await api.get('/checkpoints?limit=0'), 422, 'VALIDATION_FAILED');
    });
  });

  describe('/remediations', () => {
    it('should record with a normalised signature, found first for the same error from another machine', async () => {
      const agent = 'fixer';
      const other = await api.post(
        '/remediations',
        {
          error_message: "TypeError: Cannot read properties of undefined (reading 'id') at /srv/app/src/user.ts:10:3",
          fix: 'Guard the optional user.',
        },
        as(agent),
      );
      expect(other.status).toBe(201);
      const res = await api.post('/remediations', ALICE_ERROR, as(agent));
      expect(res.status).toBe(201);
      expect(res.body.signature).not.toContain('/home/alice');
      expect(res.body.signature).toContain('<path>/checkout.ts:<n>:<n>');
      expect(res.body.feedback).toEqual({ helpful: 0, unhelpful: 0 });
      const found = await api.get(`/remediations/search?q=${encodeURIComponent(BOB_ERROR)}`, as(agent));
      expect(found.status).toBe(200);
      expect(found.body.results[0]).toMatchObject({ id: res.body.id, fix: ALICE_ERROR.fix });
      expect(found.body.results[0].score).toBeGreaterThan(found.body.results[1]?.score ?? 0);
      expect(found.body.signature).not.toContain('bob');
      expect(
        (await api.get(`/remediations/search?q=${encodeURIComponent(BOB_ERROR)}`, as('mallory'))).body.results,
      ).toEqual([]);
      expectError(await api.get(`/remediations/${res.body.id}`, as('mallory')), 404, 'NOT_FOUND');
    });

    it('should count feedback and refuse it for another agent', async () => {
      const { id } = (
        await api.post('/remediations', {
          error_message: 'EADDRINUSE: address already in use :::3000',
          fix: 'Stop the old dev server.',
        })
      ).body;
      const res = await api.post(`/remediations/${id}/feedback`, { helpful: true });
      expect(res.status).toBe(200);
      expect(res.body.feedback).toEqual({ helpful: 1, unhelpful: 0 });
      expect((await api.get(`/remediations/${id}`)).body.feedback).toEqual({ helpful: 1, unhelpful: 0 });
      expectError(await api.post(`/remediations/${id}/feedback`, { helpful: true }, as('mallory')), 404, 'NOT_FOUND');
      expectError(await api.post(`/remediations/${id}/feedback`, { helpful: 1 }), 400, 'BAD_REQUEST');
    });

    it.each([
      ['a missing fix', { error_message: 'x' }, 400, 'BAD_REQUEST'],
      ['an empty error_message', { error_message: ' ', fix: 'f' }, 400, 'BAD_REQUEST'],
      ['tags of the wrong type', { error_message: 'x', fix: 'f', tags: 'a' }, 400, 'BAD_REQUEST'],
    ])('should refuse %s', async (_what, body, status, code) => {
      expectError(await api.post('/remediations', body), status, code);
    });

    it('should refuse an empty or missing query', async () => {
      expectError(await api.get('/remediations/search'), 400, 'BAD_REQUEST');
      expectError(await api.get('/remediations/search?q=x&limit=500'), 422, 'VALIDATION_FAILED');
    });
  });

  describe('GET /recall', () => {
    it('should rank memories, remediations and skills in one list within the token budget', async () => {
      const agent = 'recaller';
      await api.post('/memories', { content: 'User stores long-term facts with the remember skill' }, as(agent));
      await api.post(
        '/remediations',
        { error_message: 'remember skill failed: memory service unavailable', fix: 'Start the memory service.' },
        as(agent),
      );
      const res = await api.get('/recall?q=remember%20memory%20skill&budget_tokens=5000', as(agent));
      expect(res.status).toBe(200);
      const kinds = new Set(res.body.results.map((h: { kind: string }) => h.kind));
      expect(kinds).toEqual(new Set(['memory', 'remediation', 'skill']));
      const scores = res.body.results.map((h: { score: number }) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const hit of res.body.results) {
        expect(hit).toMatchObject({
          id: expect.any(String),
          text: expect.any(String),
          tokens: Math.ceil(hit.text.length / 4),
        });
      }
      expect(res.body.used_tokens).toBe(res.body.results.reduce((n: number, h: { tokens: number }) => n + h.tokens, 0));
      expect(res.body).toMatchObject({ budget_tokens: 5000, truncated: false });
      expect(res.body.results.find((h: any) => h.kind === 'skill' && h.id === 'remember')).toMatchObject({
        name: 'remember',
      });

      const small = (await api.get('/recall?q=remember%20memory%20skill&budget_tokens=20', as(agent))).body;
      expect(small.used_tokens).toBeLessThanOrEqual(20);
      expect(small.truncated).toBe(true);
      const other = (await api.get('/recall?q=remember%20memory%20skill', as('mallory'))).body.results;
      expect(other.every((h: { kind: string }) => h.kind === 'skill')).toBe(true);
    });

    it('should refuse bad parameters', async () => {
      expectError(await api.get('/recall'), 400, 'BAD_REQUEST');
      expectError(await api.get('/recall?q=x&budget_tokens=0'), 422, 'VALIDATION_FAILED');
      expectError(await api.get('/recall?q=x&budget_tokens=lots'), 400, 'BAD_REQUEST');
    });
  });
}
