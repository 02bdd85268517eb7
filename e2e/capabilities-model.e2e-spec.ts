import { AnthropicLoopback } from '#testing';
import { client, createAgents, startSystem, type Client, type TestSystem } from './harness.js';
import { finishedJob, longConversation } from './capabilities.suite.js';

const as = (agent: string, extra: Record<string, string> = {}) => ({ 'x-alfred-agent': agent, ...extra });
const json = (value: unknown) => JSON.stringify(value);

describe('capabilities with Claude (loopback Messages API, real SDK)', () => {
  let model: AnthropicLoopback;
  let system: TestSystem;
  let api: Client;

  beforeAll(async () => {
    model = await AnthropicLoopback.start();
    system = await startSystem('embedded', {
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: model.apiKey,
      ALFRED_MODEL_MAX_RETRIES: '2',
      ALFRED_DISTILL_BACKOFF_MS: '50',
      ALFRED_DISTILL_MAX_ATTEMPTS: '2',
    });
    api = client(system.url);
    await createAgents(system.url, ['m-compact', 'm-distill', 'm-distill-401', 'm-learn']);
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
    await model?.close();
  });
  beforeEach(() => model.clear());

  const session = async (agent: string, messages: unknown[]) => {
    const id = (await api.post('/sessions', {}, as(agent))).body.id as string;
    await api.post(`/sessions/${id}/messages`, { messages }, as(agent));
    return id;
  };

  describe('POST /compact', () => {
    it("should store the model's summary, count tokens with the model, and cache the stable prompt", async () => {
      const id = await session('m-compact', longConversation());
      model.reply(json({ summary: 'You were planning the deploy script step by step.' }));
      const res = await api.post(
        '/compact',
        { session_id: id, preserve_recent: 2, instructions: 'keep step numbers' },
        as('m-compact'),
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'completed', token_source: 'model' });
      expect(res.body.summary).toContain('You were planning the deploy script step by step.');
      expect(res.body.tokens_after).toBeLessThan(res.body.tokens_before);
      const [call] = model.messageRequests;
      expect(call!.body.system[0].cache_control).toEqual({ type: 'ephemeral' });
      expect(call!.body.system[1].text).toContain('keep step numbers');
      expect(model.requests.filter((r) => r.path === '/v1/messages/count_tokens')).toHaveLength(2);
    });

    it('should refuse malformed model output with MODEL_ERROR and leave the session as it was', async () => {
      const id = await session('m-compact', longConversation());
      model.reply('Here is your summary, no JSON today.');
      const res = await api.post('/compact', { session_id: id, preserve_recent: 2 }, as('m-compact'));
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('MODEL_ERROR');
      expect((await api.get(`/sessions/${id}`, as('m-compact'))).body.version).toBe(1);
    });
  });

  describe('POST /learn', () => {
    it("should write the model's edit as a new version", async () => {
      model.reply(
        json({ status: 'updated', content: '# USER.md\n\n- Drinks tea, not coffee', changes: ['added: drinks tea'] }),
      );
      const res = await api.post(
        '/learn',
        { target: 'user', observation: 'Drinks tea, not coffee', confidence: 0.9 },
        as('m-learn'),
      );
      expect(res.body).toEqual({
        status: 'updated',
        file: 'USER.md',
        changes: ['added: drinks tea'],
        backup_created: 'USER.md@v1',
        version: 2,
      });
      expect((await api.get('/agents/m-learn/files/user')).body.content).toBe(
        '# USER.md\n\n- Drinks tea, not coffee\n',
      );
    });

    it("should pass on the model's no_change with its reason", async () => {
      model.reply(json({ status: 'no_change', reason: 'USER.md already covers drinks' }));
      const res = await api.post('/learn', { target: 'user', observation: 'Likes hot beverages' }, as('m-learn'));
      expect(res.body).toEqual({ status: 'no_change', file: 'USER.md', reason: 'USER.md already covers drinks' });
    });

    it('should answer a 401 from the model API with 502 MODEL_AUTH_FAILED', async () => {
      model.fail(401);
      const res = await api.post('/learn', { target: 'soul', observation: 'Be brief' }, as('m-learn'));
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({
        code: 'MODEL_AUTH_FAILED',
        message: expect.stringMatching(/ANTHROPIC_API_KEY/),
      });
    });

    it('should answer a rate-limit storm with 429 RATE_LIMITED after the retries', async () => {
      model.fail(429, { retryAfter: 0 }).fail(429, { retryAfter: 0 }).fail(429, { retryAfter: 0 });
      const res = await api.post('/learn', { target: 'soul', observation: 'Be brief' }, as('m-learn'));
      expect(res.status).toBe(429);
      expect(res.body.error.code).toBe('RATE_LIMITED');
      expect(res.body.error.details.attempts).toBe(3);
      expect(model.messageRequests).toHaveLength(3);
    });
  });

  describe('POST /distill', () => {
    it("should add the model's insights once", async () => {
      await api.post('/memories', { content: 'Ships releases on Fridays', importance: 0.7 }, as('m-distill'));
      model.reply(json({ insights: [{ text: 'Releases ship on Fridays', importance: 0.8, support: 1 }] }));
      const res = await api.post('/distill', { scope: 'all' }, as('m-distill'));
      expect(res.body).toMatchObject({
        status: 'completed',
        insights_added: 1,
        processed_memories: 1,
        method: 'model',
      });
      model.reply(json({ insights: [{ text: 'Releases ship on Fridays.', importance: 0.8, support: 1 }] }));
      expect((await api.post('/distill', { scope: 'all' }, as('m-distill'))).body.insights_added).toBe(0);
      expect((await api.get('/memories?source=memory', as('m-distill'))).body.pagination.total).toBe(1);
    });

    it('should fail the job with its reason when the key is refused (no retry of a permanent error)', async () => {
      await api.post('/memories', { content: 'Something to distill', importance: 0.9 }, as('m-distill-401'));
      model.fail(401);
      const res = await api.post('/distill', { scope: 'all' }, as('m-distill-401'));
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('MODEL_AUTH_FAILED');
      const job = await finishedJob(api, res.body.error.details.job_id, 'm-distill-401');
      expect(job).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/permanent failure/) });
    });
  });
});

describe('capabilities that require a model, without a key', () => {
  let system: TestSystem;
  let api: Client;

  beforeAll(async () => {
    system = await startSystem('embedded', { ALFRED_REQUIRE_MODEL: 'true' });
    api = client(system.url);
  });
  afterAll(async () => system?.stop());

  it('should answer 503 MODEL_NOT_CONFIGURED naming the variable to set', async () => {
    const res = await api.post('/learn', { target: 'user', observation: 'Likes tea' });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({
      code: 'MODEL_NOT_CONFIGURED',
      message: expect.stringMatching(/ANTHROPIC_API_KEY/),
    });
    const id = (await api.post('/sessions', {})).body.id;
    expect((await api.post('/compact', { session_id: id })).body.error.code).toBe('MODEL_NOT_CONFIGURED');
  });
});
