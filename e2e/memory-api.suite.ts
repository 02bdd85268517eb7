import { client, createAgents, startSystem, type Client, type Mode, type TestSystem } from './harness.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The seed's memory API, end to end, identical in both ways Alfred runs. */
export function memoryApiSuite(mode: Mode): void {
  let system: TestSystem;
  let api: Client;
  const as = (agent: string) => ({ 'x-alfred-agent': agent });

  beforeAll(async () => {
    system = await startSystem(mode, { ALFRED_BODY_LIMIT_BYTES: String(64 * 1024) });
    api = client(system.url);
    await createAgents(system.url, [
      'batch',
      'batch-del',
      'crud',
      'friday',
      'history',
      'jarvis',
      'lister',
      'refusals',
      'searcher',
      'talker',
      'talker-2',
    ]);
  }, 60_000);
  afterAll(async () => system?.stop());

  const create = async (body: unknown, agent = 'alfred') => {
    const res = await api.post('/memories', body, as(agent));
    expect(res.status).toBe(201);
    return res.body as { id: string; timestamp: string; content: string; importance: number; tags: string[] };
  };
  const total = async (agent: string) => (await api.get('/memories', as(agent))).body.pagination.total as number;

  describe('system endpoints', () => {
    it('should describe the API at /', async () => {
      const res = await api.get('/');
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('Alfred Internal API');
      expect(res.body.endpoints.map((e: { path: string }) => e.path)).toEqual(
        expect.arrayContaining(['/health', '/memories', '/search']),
      );
    });

    it('should report health with status, version and timestamp', async () => {
      const res = await api.get('/health');
      // Status and services together, so a failure shows which service did not answer.
      expect({ status: res.status, services: res.body.services }).toMatchObject({
        status: 200,
        services: { memory: 'up' },
      });
      expect(res.body).toMatchObject({ status: 'healthy', version: expect.any(String) });
      expect(res.body.timestamp).toMatch(ISO);
      // No model configured here: /health says so, with what to set.
      expect(res.body.model).toEqual({ configured: false, hint: expect.stringContaining('ANTHROPIC_API_KEY') });
      // What carries the requests, as it is: no NATS in one process, so none is reported.
      const bus =
        mode === 'embedded'
          ? { bus: 'in-process', dependencies: {} }
          : { bus: 'nats', dependencies: { nats: 'connected' } };
      expect({ bus: res.body.bus, dependencies: res.body.dependencies }).toEqual(bus);
      const ready = (await api.get('/health/ready')).body;
      expect({ bus: ready.bus, dependencies: ready.dependencies }).toEqual(bus);
    });
  });

  describe('POST /memories', () => {
    it('should create with defaults and answer 201', async () => {
      const m = await create({ content: 'User prefers dark mode' });
      expect(m).toMatchObject({ content: 'User prefers dark mode', importance: 0.5, tags: [] });
      expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(m.timestamp).toMatch(ISO);
    });

    it.each([
      ['empty content', { content: '' }, 400, 'INVALID_CONTENT'],
      ['blank content', { content: '   ' }, 400, 'INVALID_CONTENT'],
      ['missing content', { importance: 0.3 }, 400, 'BAD_REQUEST'],
      ['content of the wrong type', { content: 42 }, 400, 'BAD_REQUEST'],
      ['importance above 1', { content: 'x', importance: 1.5 }, 422, 'VALIDATION_FAILED'],
      ['importance below 0', { content: 'x', importance: -0.1 }, 422, 'VALIDATION_FAILED'],
      ['importance of the wrong type', { content: 'x', importance: 'high' }, 400, 'BAD_REQUEST'],
      ['tags of the wrong type', { content: 'x', tags: 'a,b' }, 400, 'BAD_REQUEST'],
      ['an unknown field', { content: 'x', colour: 'red' }, 400, 'BAD_REQUEST'],
      ['a JSON array', [{ content: 'x' }], 400, 'BAD_REQUEST'],
    ])('should refuse %s with %i and change nothing', async (_what, body, status, code) => {
      const before = await total('refusals');
      const res = await api.post('/memories', body, as('refusals'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(typeof res.body.error.message).toBe('string');
      expect(await total('refusals')).toBe(before);
    });

    it('should answer malformed JSON with 400 in the error format', async () => {
      const res = await api.post('/memories', '{"content": "x",', as('refusals'));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_JSON');
    });

    it('should answer an unsupported media type with 415', async () => {
      const res = await api.post('/memories', 'content=x', { 'content-type': 'text/plain' });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('should answer an oversized body with 413', async () => {
      const res = await api.post('/memories', { content: 'x'.repeat(100 * 1024) }, as('refusals'));
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(await total('refusals')).toBe(0);
    });
  });

  describe('unknown routes and headers', () => {
    it('should answer an unknown route with 404 in the error format', async () => {
      const res = await api.get('/nope');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
    });

    it("should carry a correlation id: echo the caller's, or make one", async () => {
      const given = await api.get('/memories', { 'x-correlation-id': 'trace-abc-123' });
      expect(given.headers.get('x-correlation-id')).toBe('trace-abc-123');
      const made = await api.get('/memories');
      expect(made.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('should refuse an invalid agent name', async () => {
      const res = await api.get('/memories', as('Not An Agent!'));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/X-Alfred-Agent/);
    });
  });

  describe('GET, PUT and DELETE /memories/{id}', () => {
    it('should read a memory with its date and source', async () => {
      const m = await create({ content: 'Birthday is March 15', importance: 0.9, tags: ['personal'] }, 'crud');
      const res = await api.get(`/memories/${m.id}`, as('crud'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: m.id,
        content: 'Birthday is March 15',
        date: m.timestamp.slice(0, 10),
        timestamp: m.timestamp,
        importance: 0.9,
        tags: ['personal'],
        source: 'daily',
        // Beside the memory API's fields: who wrote it and the injection check's mark.
        provenance: {
          tenant: 'default',
          agent: 'crud',
          key: 'open-loopback',
          via: 'rest',
          written_at: expect.any(String),
        },
        trust: { flagged: false, reasons: [] },
      });
    });

    it('should answer 404 for an unknown id', async () => {
      const res = await api.get('/memories/00000000-0000-4000-8000-000000000000', as('crud'));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    });

    it('should update only the given fields and keep the original timestamp', async () => {
      const m = await create({ content: 'Uses vim', importance: 0.4, tags: ['editor'] }, 'crud');
      const res = await api.put(`/memories/${m.id}`, { content: 'Uses Neovim' }, as('crud'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: m.id,
        timestamp: m.timestamp,
        content: 'Uses Neovim',
        importance: 0.4,
        tags: ['editor'],
      });
      expect(res.body.updated_at).toMatch(ISO);
      expect((await api.get(`/memories/${m.id}`, as('crud'))).body.content).toBe('Uses Neovim');
    });

    it('should refuse a bad update and change nothing', async () => {
      const m = await create({ content: 'Stable', importance: 0.4 }, 'crud');
      expect((await api.put(`/memories/${m.id}`, { importance: 2 }, as('crud'))).status).toBe(422);
      expect((await api.put(`/memories/${m.id}`, { content: '' }, as('crud'))).status).toBe(400);
      expect((await api.get(`/memories/${m.id}`, as('crud'))).body).toMatchObject({
        content: 'Stable',
        importance: 0.4,
      });
      expect(
        (await api.put('/memories/00000000-0000-4000-8000-000000000000', { importance: 0.2 }, as('crud'))).status,
      ).toBe(404);
    });

    it('should delete once, then answer 404', async () => {
      const m = await create({ content: 'Temporary' }, 'crud');
      const res = await api.delete(`/memories/${m.id}`, undefined, as('crud'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: m.id, deleted: true });
      expect(res.body.timestamp).toMatch(ISO);
      expect((await api.delete(`/memories/${m.id}`, undefined, as('crud'))).status).toBe(404);
      expect((await api.get(`/memories/${m.id}`, as('crud'))).status).toBe(404);
    });

    it('should keep every change in the history', async () => {
      const m = await create({ content: 'v1' }, 'history');
      await api.put(`/memories/${m.id}`, { content: 'v2' }, as('history'));
      await api.delete(`/memories/${m.id}`, undefined, as('history'));
      const res = await api.get(`/memories/${m.id}/history`, as('history'));
      expect(res.status).toBe(200);
      expect(res.body.events.map((e: { kind: string }) => e.kind)).toEqual(['created', 'updated', 'deleted']);
      expect(res.body.events[1].memory.content).toBe('v2');
    });
  });

  describe('batch operations', () => {
    it('should create the valid items and report the others by index', async () => {
      const res = await api.post(
        '/memories/batch',
        {
          memories: [
            { content: 'one' },
            { content: '' },
            { content: 'three', importance: 3 },
            { content: 'four', tags: ['x'] },
          ],
        },
        as('batch'),
      );
      expect(res.status).toBe(201);
      expect(res.body.created).toBe(2);
      expect(res.body.memories.map((m: { content: string }) => m.content)).toEqual(['one', 'four']);
      expect(res.body.errors.map((e: { index: number }) => e.index)).toEqual([1, 2]);
      expect(res.body.errors[0].error).toMatch(/empty/i);
      expect(await total('batch')).toBe(2);
    });

    it('should refuse an empty batch', async () => {
      const res = await api.post('/memories/batch', { memories: [] }, as('batch'));
      expect(res.status).toBe(400);
    });

    it('should delete many and list the ids not found', async () => {
      const a = await create({ content: 'a' }, 'batch-del');
      const b = await create({ content: 'b' }, 'batch-del');
      const res = await api.delete('/memories', { ids: [a.id, b.id, 'missing-id'] }, as('batch-del'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ deleted: 2, not_found: ['missing-id'] });
      expect(await total('batch-del')).toBe(0);
      expect((await api.delete('/memories', { ids: [] }, as('batch-del'))).status).toBe(400);
    });
  });

  describe('GET /memories', () => {
    beforeAll(async () => {
      const items = Array.from({ length: 25 }, (_, i) => ({
        content: `note ${i}`,
        importance: (i % 10) / 10,
        tags: i % 2 ? ['odd'] : ['even'],
      }));
      const res = await api.post('/memories/batch', { memories: items }, as('lister'));
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { created: 25 } });
    });

    it('should page with defaults', async () => {
      const res = await api.get('/memories', as('lister'));
      expect(res.status).toBe(200);
      expect(res.body.memories).toHaveLength(20);
      expect(res.body.pagination).toEqual({ total: 25, limit: 20, offset: 0, has_more: true });
      const next = await api.get('/memories?offset=20', as('lister'));
      expect(next.body.memories).toHaveLength(5);
      expect(next.body.pagination.has_more).toBe(false);
    });

    it('should filter by tag, source and date', async () => {
      expect((await api.get('/memories?tag=odd&limit=100', as('lister'))).body.pagination.total).toBe(12);
      expect((await api.get('/memories?source=daily', as('lister'))).body.pagination.total).toBe(25);
      expect((await api.get('/memories?source=memory', as('lister'))).body.pagination.total).toBe(0);
      const today = new Date().toISOString().slice(0, 10);
      expect((await api.get(`/memories?date=${today}`, as('lister'))).body.pagination.total).toBe(25);
      expect((await api.get('/memories?date=1999-01-01', as('lister'))).body.pagination.total).toBe(0);
    });

    it('should filter by tag prefix, in any case, and page the matches', async () => {
      const all = await api.get('/memories?tag_prefix=OD&limit=5&offset=10', as('lister'));
      expect(all.body.pagination).toEqual({ total: 12, limit: 5, offset: 10, has_more: false });
      expect(all.body.memories).toHaveLength(2);
      for (const m of all.body.memories) expect(m.tags).toContain('odd');
      expect((await api.get('/memories?tag_prefix=odder', as('lister'))).body.pagination.total).toBe(0);
      expect((await api.get('/memories?tag_prefix=', as('lister'))).status).toBe(400);
    });

    it('should sort by importance in either order', async () => {
      const asc = (await api.get('/memories?sort_by=importance&sort_order=asc&limit=100', as('lister'))).body.memories;
      const values = asc.map((m: { importance: number }) => m.importance);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      const desc = (await api.get('/memories?sort_by=importance&limit=3', as('lister'))).body.memories;
      expect(desc[0].importance).toBe(0.9);
    });

    it.each([
      ['limit above 100', '?limit=101', 422],
      ['limit of 0', '?limit=0', 422],
      ['a non-numeric limit', '?limit=ten', 400],
      ['a negative offset', '?offset=-1', 422],
      ['an unknown sort field', '?sort_by=size', 400],
      ['an unknown source', '?source=web', 400],
      ['a malformed date', '?date=yesterday', 400],
      ['an unknown parameter', '?colour=red', 400],
    ])('should refuse %s', async (_what, query, status) => {
      const res = await api.get(`/memories${query}`, as('lister'));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toEqual(expect.any(String));
    });
  });

  describe('GET /search', () => {
    beforeAll(async () => {
      await api.post(
        '/memories/batch',
        {
          memories: [
            { content: 'The user prefers dark mode in every editor', importance: 0.8, tags: ['preference'] },
            { content: 'The project uses Python 3.11 and poetry', importance: 0.6 },
            { content: 'Birthday is on March 15', importance: 0.9 },
          ],
        },
        as('searcher'),
      );
    });

    it('should rank the matching memory first with a score in 0..1', async () => {
      const res = await api.get('/search?q=dark%20mode%20editor', as('searcher'));
      expect(res.status).toBe(200);
      expect(res.body.query).toBe('dark mode editor');
      expect(res.body.results[0].content).toMatch(/dark mode/);
      for (const r of res.body.results) {
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(1);
      }
      expect(res.body.results[0]).toMatchObject({ source: 'daily', tags: ['preference'], date: expect.any(String) });
      expect(res.body.total).toBeGreaterThanOrEqual(res.body.results.length);
      expect(typeof res.body.search_time_ms).toBe('number');
    });

    it('should honour limit, min_score and source', async () => {
      expect((await api.get('/search?q=python&limit=1', as('searcher'))).body.results).toHaveLength(1);
      const strict = await api.get('/search?q=python%20poetry&min_score=0.99', as('searcher'));
      expect(strict.body.results.every((r: { score: number }) => r.score >= 0.99)).toBe(true);
      expect((await api.get('/search?q=python&source=memory', as('searcher'))).body.results).toHaveLength(0);
    });

    it.each([
      ['a missing q', '', 400],
      ['an empty q', '?q=', 400],
      ['limit above 50', '?q=a&limit=51', 422],
      ['min_score above 1', '?q=a&min_score=1.5', 422],
    ])('should refuse %s', async (_what, query, status) => {
      expect((await api.get(`/search${query}`, as('searcher'))).status).toBe(status);
    });
  });

  describe('POST /conversations', () => {
    const messages = [
      { speaker: 'Caroline', content: 'I went to the adoption agency yesterday', time: '2023-05-08T13:56:00Z' },
      { speaker: 'Melanie', content: 'How did it go?', time: '2023-05-08T13:57:00Z' },
      {
        speaker: 'Caroline',
        content: 'Really well, they start the paperwork next month',
        time: '2023-05-08T13:58:00Z',
      },
      { speaker: 'Melanie', content: 'I painted a sunrise over the lake', time: '2023-06-20T09:00:00Z' },
    ];

    it('should store each message as a memory, shown without its context and found through it', async () => {
      const res = await api.post('/conversations', { conversation_id: 'c-1', messages, tags: ['chat'] }, as('talker'));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ conversation_id: 'c-1', created: 4 });
      const [first, second] = res.body.memories as Array<{ id: string; content: string }>;
      expect(first!.content).toBe('Caroline: I went to the adoption agency yesterday');
      const read = await api.get(`/memories/${second!.id}`, as('talker'));
      expect(Object.keys(read.body).sort()).toEqual([
        'content',
        'date',
        'id',
        'importance',
        'provenance',
        'source',
        'tags',
        'timestamp',
        'trust',
      ]);
      expect(read.body).toMatchObject({ content: 'Melanie: How did it go?', tags: ['chat'], source: 'daily' });
      // "How did it go?" has none of these words: its neighbours and its date do.
      const found = await api.get('/search?q=adoption%20agency%20May%202023&explain=true', as('talker'));
      const hit = found.body.results.find((r: { id: string }) => r.id === second!.id);
      expect(hit).toBeDefined();
      expect(hit.explanation[0]).toMatchObject({ signal: 'lexical' });
      const byDate = await api.get('/search?q=June%202023', as('talker'));
      expect(byDate.body.results[0].content).toBe('Melanie: I painted a sunrise over the lake');
    });

    it('should refuse a message without a speaker or with a bad time, and store nothing', async () => {
      const before = await total('talker-2');
      const noSpeaker = await api.post(
        '/conversations',
        { messages: [{ speaker: ' ', content: 'hi' }] },
        as('talker-2'),
      );
      expect([400, 422]).toContain(noSpeaker.status);
      expect(noSpeaker.body.error.message).toMatch(/speaker/);
      const badTime = await api.post(
        '/conversations',
        { messages: [{ speaker: 'a', content: 'hi', time: 'yesterday' }] },
        as('talker-2'),
      );
      expect([400, 422]).toContain(badTime.status);
      expect(badTime.body.error.code).toEqual(expect.any(String));
      expect(await total('talker-2')).toBe(before);
    });
  });

  describe('agent isolation', () => {
    it('should never show one agent the memories of another', async () => {
      const secret = await create({ content: 'jarvis secret launch code', tags: ['secret'] }, 'jarvis');
      const other = as('friday');
      expect((await api.get(`/memories/${secret.id}`, other)).status).toBe(404);
      expect((await api.put(`/memories/${secret.id}`, { content: 'hijacked' }, other)).status).toBe(404);
      expect((await api.delete(`/memories/${secret.id}`, undefined, other)).status).toBe(404);
      expect((await api.delete('/memories', { ids: [secret.id] }, other)).body).toMatchObject({
        deleted: 0,
        not_found: [secret.id],
      });
      expect((await api.get(`/memories/${secret.id}/history`, other)).status).toBe(404);
      expect((await api.get('/memories?tag=secret', other)).body.pagination.total).toBe(0);
      const found = (await api.get('/search?q=jarvis%20secret%20launch%20code', other)).body.results;
      expect(found.map((r: { id: string }) => r.id)).not.toContain(secret.id);
      expect((await api.get(`/memories/${secret.id}`, as('jarvis'))).body.content).toBe('jarvis secret launch code');
    });
  });
}
