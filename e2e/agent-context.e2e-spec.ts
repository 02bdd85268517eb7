import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScriptedReply } from '#testing';
import { client, type Client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';

const WINDOW = 8_000;
const bash = (command: string): ScriptedReply => ({
  content: [{ type: 'tool_use', name: 'bash', input: { command } }],
  stopReason: 'tool_use',
});
const tokensOf = (body: unknown) =>
  Math.ceil(
    JSON.stringify([(body as any).system ?? '', (body as any).messages ?? [], (body as any).tools ?? []]).length / 4,
  );
const isTurnCall = (body: any) => String(body.system?.[0]?.text ?? '').startsWith('You are ');

/** Turns through the loopback model with an 8k window, which refuses longer prompts as the API does. */
describe('a turn never jams on context (8k window)', () => {
  let sys: AgentSystem;
  let api: Client;

  beforeAll(async () => {
    sys = await startAgentSystem(
      'embedded',
      {
        ALFRED_CONTEXT_WINDOW: String(WINDOW),
        ALFRED_COMPACT_THRESHOLD: '0.7',
        ALFRED_MAX_TOOL_ROUNDS: '30',
        ALFRED_MEMORY_CONTEXT_LIMIT: '0',
      },
      { contextWindow: WINDOW },
    );
    api = client(sys.url);
    sys.model.answer(
      (b) => String(b.system?.[0]?.text ?? '').startsWith('You compact the earlier part'),
      () => ({
        content: [
          { type: 'text', text: JSON.stringify({ summary: 'You printed blocks of x characters, round after round.' }) },
        ],
      }),
    );
  }, 60_000);
  afterAll(() => sys?.stop());
  beforeEach(() => sys.model.clear());

  const session = async () => (await api.post('/sessions', {})).body.id as string;
  const turnRequests = () => sys.model.messageRequests.filter((r) => isTurnCall(r.body));

  it('should fold finished rounds inside one long turn and keep every call inside the window', async () => {
    const id = await session();
    sys.model.script(
      ...Array.from({ length: 16 }, (_, i) => bash(`printf 'round ${i} '; printf 'x%.0s' $(seq 1 1500)`)),
      { content: [{ type: 'text', text: 'All printed.' }] },
    );

    const { events } = await streamTurn(sys.url, id, 'Print sixteen blocks.');

    expect(named(events, 'done')[0]).toMatchObject({ status: 'completed', rounds: 16 });
    expect(named(events, 'compacted').length).toBeGreaterThan(0);
    for (const r of turnRequests()) expect(tokensOf(r.body)).toBeLessThanOrEqual(WINDOW);
    const stored = (await api.get(`/sessions/${id}`)).body;
    expect(stored.messages[0].content).toContain('[Compacted summary');
  }, 60_000);

  it('should cut a huge tool result and keep the whole output in the workspace', async () => {
    const id = await session();
    sys.model.script(bash("printf 'y%.0s' $(seq 1 30000)"), { content: [{ type: 'text', text: 'Done.' }] });

    const { events } = await streamTurn(sys.url, id, 'Print a lot.');

    const [result] = named(events, 'tool_result');
    expect(result.content.length).toBeLessThan(WINDOW * 4 * 0.3);
    const file = result.content.match(/is in (\.alfred\/outputs\/\S+\.txt) in your workspace/)?.[1];
    expect(file).toBeDefined();
    const whole = await readFile(join(sys.dataDir, 'workspaces', 'default', 'alfred', file!), 'utf8');
    expect(whole.match(/y/g)).toHaveLength(30_000);
    expect(named(events, 'done')[0].status).toBe('completed');
  });

  it('should compact a session of a few huge messages for real, not just announce it', async () => {
    const id = await session();
    const huge = (role: string, i: number) => ({ role, content: `Part ${i}: ${'lorem ipsum dolor '.repeat(700)}` });
    expect(
      (
        await api.post(`/sessions/${id}/messages`, {
          messages: [huge('user', 1), huge('assistant', 2), huge('user', 3), huge('assistant', 4)],
        })
      ).status,
    ).toBe(200);
    sys.model.reply('Continuing.');

    const { events } = await streamTurn(sys.url, id, 'Go on.');

    const [compacted] = named(events, 'compacted');
    expect(compacted.tokens_after).toBeLessThan(compacted.tokens_before / 2);
    expect(named(events, 'done')[0].status).toBe('completed');
    for (const r of turnRequests()) expect(tokensOf(r.body)).toBeLessThanOrEqual(WINDOW);
  });

  it('should compact and retry once when the model answers "prompt is too long"', async () => {
    const id = await session();
    const talk = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `Message ${i}: ${'plan detail '.repeat(120)}`,
    }));
    expect((await api.post(`/sessions/${id}/messages`, { messages: talk })).status).toBe(200);
    sys.model.fail(400, { message: 'prompt is too long: 210000 tokens > 200000 maximum' }).reply('Fits now.');

    const { events } = await streamTurn(sys.url, id, 'Continue.');

    expect(named(events, 'compacted')).toHaveLength(1);
    expect(named(events, 'message')[0].text).toBe('Fits now.');
    const [refused, retried] = turnRequests();
    expect(retried!.body.messages.length).toBeLessThan(refused!.body.messages.length);
    // The session is usable afterwards: the next turn simply runs.
    sys.model.reply('Still fine.');
    expect((await api.post(`/sessions/${id}/turns`, { message: 'and now?', stream: false })).body).toMatchObject({
      status: 'completed',
      text: 'Still fine.',
    });
  });

  it('should fail clearly, not loop, when the model refuses even the folded prompt', async () => {
    const id = await session();
    sys.model
      .fail(400, { message: 'prompt is too long: 9000 tokens > 8000 maximum' })
      .fail(400, { message: 'prompt is too long: 9000 tokens > 8000 maximum' });

    const { events } = await streamTurn(sys.url, id, 'Hello.');

    expect(named(events, 'error')[0].error.code).toBe('CONTEXT_TOO_LONG');
    expect(named(events, 'done')[0].status).toBe('failed');
    expect(turnRequests()).toHaveLength(2);
  });
});
