import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScriptedBlock } from '#testing';
import { client, createAgents, startSystem, type Client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';

const as = (agent: string) => ({ 'x-alfred-agent': agent });
const tool = (name: string, input: Record<string, unknown>, id?: string): ScriptedBlock => ({
  type: 'tool_use',
  name,
  input,
  ...(id ? { id } : {}),
});
/** The tool_result blocks the model was sent in its last request. */
const lastResults = (sys: AgentSystem) =>
  (sys.model.messageRequests.at(-1)!.body.messages as any[])
    .at(-1)
    .content.filter((b: any) => b.type === 'tool_result');

describe('agent turns (embedded, loopback model through the real SDK)', () => {
  let sys: AgentSystem;
  let api: Client;

  beforeAll(async () => {
    sys = await startAgentSystem('embedded', { ALFRED_MAX_TOOL_ROUNDS: '4', ALFRED_TURN_HEARTBEAT_MS: '200' });
    api = client(sys.url);
    await createAgents(sys.url, ['editor', 'escaper', 'rem']);
  }, 60_000);
  afterAll(() => sys?.stop());
  beforeEach(() => sys.model.clear());

  const newSession = async (agent = 'alfred') => (await api.post('/sessions', {}, as(agent))).body.id as string;

  it('should read the index, load_skill("remember"), run its curl through bash, and store the memory', async () => {
    const index = (await api.get('/skills')).body;
    const remember = index.skills.find((s: { name: string }) => s.name === 'remember');
    const id = await newSession('rem');
    sys.model.script(
      { content: [tool('read', { path: remember.location, limit: 3 })], stopReason: 'tool_use' },
      { content: [tool('load_skill', { name: 'remember' })], stopReason: 'tool_use' },
      {
        content: [
          tool('bash', {
            command:
              // As the remember skill's curl lines: with the turn's credential, which the OS sandbox's API relay
              // would add anyway, so the write is the turn's also where bash runs without that sandbox.
              `curl -sS --fail-with-body -X POST "$ALFRED_API_URL/memories" -H 'Content-Type: ` +
              `application/json' -H "Authorization: Bearer \${ALFRED_API_KEY:-}" -H "X-Alfred-Agent: $ALFRED_AGENT" ` +
              `-d '{"content": "User prefers dark mode ` +
              `in every editor", "importance": 0.8, "tags": ["preference"]}'`,
          }),
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'I will remember that you prefer dark mode.' }] },
    );
    const { status, events } = await streamTurn(sys.url, id, 'Remember that I prefer dark mode everywhere.', as('rem'));

    expect(status).toBe(200);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['started', 'text_delta', 'tool_call', 'tool_result', 'message', 'usage', 'done']),
    );
    expect(named(events, 'done')[0]).toMatchObject({ status: 'completed', rounds: 3 });
    const results = named(events, 'tool_result');
    expect(results[0]).toMatchObject({
      name: 'read',
      is_error: false,
      content: expect.stringContaining('name: remember'),
    });
    expect(results[1]).toMatchObject({
      name: 'load_skill',
      is_error: false,
      content: expect.stringContaining('# Remember'),
    });
    expect(results[2]).toMatchObject({
      name: 'bash',
      is_error: false,
      content: expect.stringContaining('[exit code 0]'),
    });
    expect(named(events, 'message')[0].text).toBe('I will remember that you prefer dark mode.');

    const first = sys.model.messageRequests[0]!.body;
    expect(first.system.map((b: { text: string }) => b.text).join('\n')).toMatch(/## Available skills[\s\S]*remember/);
    expect(first.system.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    // The per-turn material (environment, relevant memories) follows the cached conversation, not the system prompt.
    expect(JSON.stringify(first.system)).not.toContain('## Environment');
    expect(first.messages[0].content).toMatch(/## Environment[\s\S]*Alfred API: http:\/\/127\.0\.0\.1/);
    const loadSkill = first.tools.find((t: { name: string }) => t.name === 'load_skill');
    expect(loadSkill.input_schema.properties.name.enum).toEqual(expect.arrayContaining(['remember', 'recall']));
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['read', 'write', 'edit', 'bash', 'load_skill', 'activate_skill', 'deactivate_skill']),
    );

    const memories = (await api.get('/memories', as('rem'))).body.memories;
    expect(memories.map((m: { content: string }) => m.content)).toEqual(['User prefers dark mode in every editor']);
    // Written by the agent's own bash with its turn's scoped credential: the memory says which session and turn, and
    // that bash wrote it (this curl names no skill with X-Alfred-Skill).
    expect(memories[0].provenance).toMatchObject({
      agent: 'rem',
      session: id,
      turn: expect.any(String),
      via: 'tool:bash',
    });
    expect(memories[0].provenance.key).toBeUndefined();
    // The skill it loaded was used in a completed turn: one success on the skill's record.
    expect((await api.get('/skills/remember')).body.outcomes).toEqual({
      success: 1,
      failure: 0,
      estimate: expect.any(Number),
    });
    const session = (await api.get(`/sessions/${id}`, as('rem'))).body;
    expect(session.messages).toHaveLength(8);
    expect(session.messages.at(-1)).toMatchObject({ role: 'assistant' });
  }, 30_000);

  it('should say in /health that a model is configured, and which', async () => {
    expect((await api.get('/health')).body.model).toEqual({ configured: true, name: expect.any(String) });
  });

  it('should answer the JSON variant with the final result', async () => {
    const id = await newSession();
    sys.model.reply('Hello there.');
    const res = await api.post(`/sessions/${id}/turns`, { message: 'hi' }, { accept: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      session_id: id,
      status: 'completed',
      text: 'Hello there.',
      rounds: 0,
      error: null,
      usage: { model_calls: 1 },
    });
  });

  it('should tell the model a refused activation, and keep the skill inactive', async () => {
    const id = await newSession();
    sys.model.script(
      { content: [tool('activate_skill', { name: 'recall' })], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'OK, without it.' }] },
    );
    const { events } = await streamTurn(sys.url, id, 'Use your recall skill.', {}, async (e) => {
      if (e.event === 'confirmation_request')
        await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: false });
    });
    expect(named(events, 'confirmation_request')[0]).toMatchObject({ action: 'activate_skill', skill: 'recall' });
    expect(named(events, 'tool_result')[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('declined'),
    });
    expect(lastResults(sys)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('declined') });
    expect((await api.get(`/sessions/${id}`)).body.active_skill).toBeNull();
  });

  it('should put an approved skill into the system prompt and keep it there on the next turn', async () => {
    const id = await newSession();
    sys.model.script(
      { content: [tool('activate_skill', { name: 'recall' })], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'Active.' }] },
    );
    await streamTurn(sys.url, id, 'Activate recall.', {}, async (e) => {
      if (e.event === 'confirmation_request')
        await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: true });
    });
    expect((await api.get(`/sessions/${id}`)).body.active_skill).toBe('recall');
    sys.model.reply('Still active.');
    await api.post(`/sessions/${id}/turns`, { message: 'next', stream: false });
    const system = sys.model.messageRequests
      .at(-1)!
      .body.system.map((b: { text: string }) => b.text)
      .join('\n');
    expect(system).toMatch(/## Active skill[\s\S]*<skill name="recall"/);
  });

  it('should show the model an error for an edit whose text matches twice, and change nothing', async () => {
    const id = await newSession('editor');
    sys.model.script(
      { content: [tool('write', { path: 'notes/todo.txt', content: 'fix bug\nfix bug\n' })], stopReason: 'tool_use' },
      {
        content: [tool('edit', { path: 'notes/todo.txt', oldText: 'fix bug', newText: 'fixed' })],
        stopReason: 'tool_use',
      },
      { content: [tool('edit', { path: 'notes/todo.txt', oldText: 'missing', newText: 'x' })], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'The text is ambiguous.' }] },
    );
    const { events } = await streamTurn(sys.url, id, 'Mark the bug fixed.', as('editor'));
    const [write, twice, missing] = named(events, 'tool_result');
    expect(write).toMatchObject({ is_error: false });
    expect(twice).toMatchObject({ is_error: true, content: expect.stringMatching(/matches 2 times/) });
    expect(missing).toMatchObject({ is_error: true, content: expect.stringMatching(/not found/) });
    const file = join(sys.dataDir, 'workspaces', 'default', 'editor', 'notes', 'todo.txt');
    expect(await readFile(file, 'utf8')).toBe('fix bug\nfix bug\n');
  });

  it('should refuse paths outside the workspace, symlinks out of it included', async () => {
    const id = await newSession('escaper');
    sys.model.script(
      {
        content: [
          tool('read', { path: '../../../../etc/passwd' }, 'toolu_up'),
          tool('read', { path: '/etc/passwd' }, 'toolu_abs'),
          tool('write', { path: '../other/evil.txt', content: 'x' }, 'toolu_write'),
          tool('bash', { command: 'ln -s /etc outside && echo linked' }, 'toolu_ln'),
        ],
        stopReason: 'tool_use',
      },
      {
        content: [
          tool('read', { path: 'outside/passwd' }, 'toolu_link'),
          tool('write', { path: 'outside/evil', content: 'x' }, 'toolu_linkw'),
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'I cannot leave my workspace.' }] },
    );
    const { events } = await streamTurn(sys.url, id, 'Read /etc/passwd', as('escaper'));
    const results = Object.fromEntries(named(events, 'tool_result').map((r) => [r.id, r]));
    for (const key of ['toolu_up', 'toolu_abs', 'toolu_write', 'toolu_link', 'toolu_linkw']) {
      expect(results[key]).toMatchObject({ is_error: true, content: expect.stringMatching(/outside the workspace/) });
    }
    expect(results.toolu_ln).toMatchObject({ is_error: false });
    expect(named(events, 'done')[0].status).toBe('completed');
  });

  it('should stop a runaway tool loop at the round limit and close the session cleanly', async () => {
    const id = await newSession();
    for (let i = 0; i < 6; i++)
      sys.model.script({ content: [tool('bash', { command: `echo round ${i}` })], stopReason: 'tool_use' });
    const { events } = await streamTurn(sys.url, id, 'Loop forever.');
    expect(named(events, 'error')[0].error).toMatchObject({ code: 'TOOL_ROUND_LIMIT' });
    expect(named(events, 'done')[0]).toMatchObject({ status: 'failed', rounds: 4 });
    expect(sys.model.pending).toBe(2);
    const session = (await api.get(`/sessions/${id}`)).body;
    expect(session.messages).toHaveLength(10);
    expect(session.messages.at(-1)).toEqual({
      role: 'assistant',
      content: '[turn stopped: the tool round limit was reached]',
    });
    // Four bash calls, each in a fresh OS sandbox (bubblewrap + the API relay), on a shared two-core machine.
  }, 30_000);

  it('should cancel a running turn through DELETE /sessions/{id}/turns/current', async () => {
    const id = await newSession();
    sys.model.script({ content: [{ type: 'text', text: 'too late' }], delayMs: 20_000 });
    const { events } = await streamTurn(sys.url, id, 'Take your time.', {}, async (e) => {
      if (e.event === 'started')
        expect((await api.delete(`/sessions/${id}/turns/current`)).body).toMatchObject({
          turn_id: e.data.turn_id,
          cancelled: true,
        });
    });
    expect(named(events, 'done')[0]).toMatchObject({ status: 'cancelled' });
    expect((await api.get(`/sessions/${id}`)).body.version).toBe(0);
    expect((await api.delete(`/sessions/${id}/turns/current`)).status).toBe(404);
  });

  it('should refuse a second turn on a session while one runs (409)', async () => {
    const id = await newSession();
    sys.model.script({ content: [{ type: 'text', text: 'slow' }], delayMs: 1_000 });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = streamTurn(sys.url, id, 'one', {}, (e) => void (e.event === 'started' && started()));
    await running;
    const second = await api.post(`/sessions/${id}/turns`, { message: 'two', stream: false });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('CONFLICT');
    expect(named((await first).events, 'done')[0].status).toBe('completed');
  });

  describe('named agents', () => {
    it('should create, read, patch and list agents, with alfred always there', async () => {
      expect((await api.post('/agents', { name: 'jarvis', persona: 'Formal, concise, proactive.' })).status).toBe(201);
      expect((await api.post('/agents', { name: 'jarvis' })).status).toBe(409);
      expect((await api.get('/agents/jarvis')).body).toMatchObject({
        name: 'jarvis',
        persona: 'Formal, concise, proactive.',
        default: false,
      });
      expect((await api.call('PATCH', '/agents/jarvis', { persona: 'Dry wit.' })).body.persona).toBe('Dry wit.');
      const names = (await api.get('/agents')).body.agents.map((a: { name: string }) => a.name);
      expect(names[0]).toBe('alfred');
      expect(names).toContain('jarvis');
      expect((await api.get('/agents/nobody')).status).toBe(404);
    });

    it("should put the agent's persona into its turns' system prompt", async () => {
      await api.post('/agents', { name: 'friday', persona: 'Cheerful and brief.' });
      const id = await newSession('friday');
      sys.model.reply('Hi!');
      await api.post(`/sessions/${id}/turns`, { message: 'hello', stream: false }, as('friday'));
      expect(sys.model.messageRequests[0]!.body.system[0].text).toMatch(/You are friday[\s\S]*Cheerful and brief\./);
    });

    it('should delete an agent with its memories, sessions and files only when confirmed; never alfred', async () => {
      await api.post('/agents', { name: 'temp', persona: 'Temporary.' });
      await api.post('/memories', { content: 'temp fact one' }, as('temp'));
      await api.post('/memories', { content: 'temp fact two' }, as('temp'));
      await api.post('/memories', { content: 'alfred keeps this' });
      await api.post('/sessions', {}, as('temp'));
      expect((await api.delete('/agents/temp')).status).toBe(400);
      expect((await api.delete('/agents/temp?confirm=other')).status).toBe(400);
      expect((await api.get('/memories', as('temp'))).body.memories).toHaveLength(2);
      expect((await api.delete('/agents/alfred?confirm=alfred')).status).toBe(403);
      const res = await api.delete('/agents/temp?confirm=temp');
      expect(res.body).toEqual({
        name: 'temp',
        deleted: true,
        memories_deleted: 2,
        sessions_deleted: 1,
        files_deleted: 0,
        checkpoints_deleted: 0,
        remediations_deleted: 0,
      });
      expect((await api.get('/agents/temp')).status).toBe(404);
      expect((await api.get('/memories', as('temp'))).status).toBe(404);
      expect((await api.get('/sessions', as('temp'))).status).toBe(404);
      expect((await api.get('/memories')).body.memories.map((m: { content: string }) => m.content)).toContain(
        'alfred keeps this',
      );
    });
  });
});

describe('agent turns past the compaction threshold', () => {
  let sys: AgentSystem;
  let api: Client;
  beforeAll(async () => {
    sys = await startAgentSystem('embedded', { ALFRED_CONTEXT_WINDOW: '8000', ALFRED_COMPACT_THRESHOLD: '0.5' });
    api = client(sys.url);
  }, 60_000);
  afterAll(() => sys?.stop());

  it('should compact via the compactor before the next model call, the active skill kept in the prompt', async () => {
    const id = (await api.post('/sessions', {})).body.id;
    sys.model.script(
      { content: [tool('activate_skill', { name: 'recall' })], stopReason: 'tool_use' },
      { content: [{ type: 'text', text: 'Active.' }] },
    );
    await streamTurn(sys.url, id, 'Activate recall.', {}, async (e) => {
      if (e.event === 'confirmation_request')
        await api.post(`/sessions/${id}/confirm`, { request_id: e.data.request_id, approve: true });
    });
    expect(named((await streamTurn(sys.url, id, 'noop')).events, 'compacted')).toHaveLength(0);
    const long = Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `Step ${i}: ${'details of the plan '.repeat(200)}`,
    }));
    expect((await api.post(`/sessions/${id}/messages`, { messages: long })).status).toBe(200);
    const before = (await api.get(`/sessions/${id}`)).body.message_count;
    sys.model.clear();
    sys.model
      .reply(JSON.stringify({ summary: 'The user planned ten steps in detail.' }))
      .reply('Continuing from the summary.');

    const { events } = await streamTurn(sys.url, id, 'What was step 3?');

    const [compacted] = named(events, 'compacted');
    expect(compacted.tokens_after).toBeLessThan(compacted.tokens_before);
    expect(named(events, 'done')[0].status).toBe('completed');
    const call = sys.model.messageRequests.at(-1)!.body;
    expect(call.system.map((b: { text: string }) => b.text).join('\n')).toMatch(
      /## Active skill[\s\S]*<skill name="recall"/,
    );
    expect(JSON.stringify(call.messages[0])).toContain('The user planned ten steps in detail.');
    const session = (await api.get(`/sessions/${id}`)).body;
    expect(session.message_count).toBeLessThan(before);
    expect(session.active_skill).toBe('recall');
  }, 30_000);
});

describe('agent turns without a model key', () => {
  it('should answer 503 MODEL_NOT_CONFIGURED', async () => {
    const system = await startSystem('embedded');
    try {
      const api = client(system.url);
      const id = (await api.post('/sessions', {})).body.id;
      const res = await api.post(`/sessions/${id}/turns`, { message: 'hi' });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        code: 'MODEL_NOT_CONFIGURED',
        message: expect.stringMatching(/ANTHROPIC_API_KEY/),
      });
    } finally {
      await system.stop();
    }
  }, 30_000);
});
