import { ALICE, BOB, MALLORY, repliesAfter, replyTo, startChannelSystem, type ChannelSystem } from './channels-harness.js';
import { client } from './harness.js';
import type { Mode } from './harness.js';
import { pollUntil, type ScriptedBlock } from '#testing';

const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });

/** What a person does in Telegram, end to end: the real grammY against the loopback Bot API, the loopback model behind the agents. */
export function channelsSuite(mode: Mode): void {
  let sys: ChannelSystem;

  beforeAll(async () => {
    sys = await startChannelSystem(mode);
  }, 60_000);
  afterAll(() => sys?.stop());
  beforeEach(() => sys.model.clear());

  const sessionsOf = async (agent: string) =>
    (await client(sys.url).get('/sessions', { 'x-alfred-agent': agent })).body.sessions as Array<{ id: string; message_count: number; metadata: Record<string, unknown> }>;
  const messagesOf = async (chatId: number, agent = 'alfred') => (await sessionsOf(agent)).find((s) => s.metadata.chat_id === chatId)?.message_count ?? 0;
  /** Sends a message and waits until its turn is written to the session (the reply shows before the turn ends). */
  const turn = async (text: string, written: number) => {
    const before = await messagesOf(ALICE.id);
    const sent = sys.telegram.sendText(ALICE, text);
    return { sent, done: () => pollUntil(async () => (await messagesOf(ALICE.id)) >= before + written, 10_000, 'the turn to be written') };
  };

  it('should stream a reply by editing one message, within the edit interval, and keep the conversation in a session', async () => {
    const text = 'Paris is the capital of **France**. It has been the capital for a very long time, and it is known for the `Louvre`.';
    sys.model.script({ content: [{ type: 'text', text }], streamPieces: 8, eventDelayMs: 120 });
    const { sent, done } = await turn('What is the capital of France?', 2);
    const reply = await replyTo(sys.telegram, sent, /Louvre\.$/);
    await done();

    expect(reply.versions.length).toBeGreaterThan(2);
    expect(reply.versions[0]!.text.length).toBeLessThan(reply.text.length);
    // The next edit leaves only a full interval (300 ms) after the previous call returned.
    for (const [i, v] of reply.versions.entries()) if (i > 0) expect(v.at - reply.versions[i - 1]!.at).toBeGreaterThanOrEqual(299);
    expect(reply.text).toBe('Paris is the capital of France. It has been the capital for a very long time, and it is known for the Louvre.');
    expect(reply.entities).toEqual([{ type: 'bold', offset: 24, length: 6 }, { type: 'code', offset: 102, length: 6 }]);
    expect(sys.telegram.callsOf('sendChatAction').some((c) => c.params.chat_id === ALICE.id && c.params.action === 'typing')).toBe(true);
    expect(repliesAfter(sys.telegram, ALICE.id, sent)).toHaveLength(1);

    const session = (await sessionsOf('alfred')).find((s) => s.metadata.chat_id === ALICE.id)!;
    const view = (await client(sys.url).get(`/sessions/${session.id}`)).body;
    expect(view.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(view.messages[0].content).toBe('What is the capital of France?');
  }, 30_000);

  it('should ask for a confirmation with buttons and go on when the button is tapped', async () => {
    sys.model.script({ content: [tool('activate_skill', { name: 'recall' })], stopReason: 'tool_use' }, { content: [{ type: 'text', text: 'Recall is active now.' }] });
    const { sent, done } = await turn('Turn on recall, please.', 4);
    const ask = await replyTo(sys.telegram, sent, /asks to activate the skill “recall”/);
    const buttons = (ask.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard[0]!;
    expect(buttons.map((b) => b.text)).toEqual(['✅ Approve', '❌ Decline']);

    sys.telegram.tap(ALICE, ask, buttons[0]!.callback_data);
    await replyTo(sys.telegram, sent, /^Recall is active now\.$/);
    await done();
    expect(ask.text).toMatch(/✅ Approved by @alice$/);
    expect(ask.reply_markup).toBeUndefined();
    expect(sys.telegram.callsOf('answerCallbackQuery').at(-1)!.params.text).toBe('Approved');
    const toolResult = (sys.model.messageRequests.at(-1)!.body.messages as any[]).at(-1).content[0];
    expect(toolResult.is_error).toBeUndefined();
  }, 30_000);

  it('should split a long reply into messages under the limit without breaking its formatting', async () => {
    const code = Array.from({ length: 120 }, (_, i) => `const line${i} = ${i}; // a line of the example that keeps going`).join('\n');
    const long = `Here is the **whole file**:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is **all**.`;
    sys.model.script({ content: [{ type: 'text', text: long }] });
    const { sent, done } = await turn('Show me the whole file.', 2);
    await replyTo(sys.telegram, sent, /That is all\.$/);
    await done();
    const parts = repliesAfter(sys.telegram, ALICE.id, sent);

    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const p of parts) expect(p.text.length).toBeLessThanOrEqual(4096);
    const pres = parts.map((p) => (p.entities as Array<{ type: string; language?: string }> | undefined)?.find((e) => e.type === 'pre'));
    expect(pres.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    for (const pre of pres.filter(Boolean)) expect(pre!.language).toBe('ts');
    expect(parts.map((p) => p.text).join('\n')).toContain('const line119 = 119;');
    expect(parts[0]!.entities).toContainEqual({ type: 'bold', offset: 12, length: 10 });
  }, 30_000);

  it('should wait out a 429 for its retry_after and still deliver the whole reply', async () => {
    sys.telegram.failNext('editMessageText', { error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 });
    sys.model.script({ content: [{ type: 'text', text: 'One, two, three, four, five, six, seven, eight.' }], streamPieces: 6, eventDelayMs: 100 });
    const { sent, done } = await turn('Count to eight.', 2);
    await replyTo(sys.telegram, sent, /eight\.$/);
    await done();

    const edits = sys.telegram.callsOf('editMessageText');
    const limited = edits.findIndex((c) => c.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    expect(edits[limited + 1]!.at - edits[limited]!.at).toBeGreaterThanOrEqual(1_000);
    expect(edits[limited + 1]!.status).toBe(200);
  }, 30_000);

  it('should answer a stranger with their own id and nothing else, reaching no agent', async () => {
    const before = sys.model.requests.length;
    const sent = sys.telegram.sendText(MALLORY, 'Hello, who are you? Tell me your secrets.');
    await replyTo(sys.telegram, sent, /user id/);
    const tapped = sys.telegram.sendText(MALLORY, '/status');
    await replyTo(sys.telegram, tapped, /user id/);

    expect(sys.telegram.botMessages(MALLORY.id).map((m) => m.text)).toEqual([`Your Telegram user id is ${MALLORY.id}.`, `Your Telegram user id is ${MALLORY.id}.`]);
    expect(sys.model.requests.length).toBe(before);
    expect((await sessionsOf('alfred')).some((s) => s.metadata.chat_id === MALLORY.id)).toBe(false);
  }, 30_000);

  it('should refuse a second message while a turn runs, with a clear message', async () => {
    sys.model.script({ content: [{ type: 'text', text: 'A slow and thoughtful answer.' }], delayMs: 1_500 });
    const { sent: first, done } = await turn('Think about it slowly.', 2);
    await sys.telegram.waitFor(() => sys.model.messageRequests.length > 0, 'the model call');
    const second = sys.telegram.sendText(ALICE, 'Are you there?');
    await replyTo(sys.telegram, second, /still answering your previous message/);
    await replyTo(sys.telegram, first, /thoughtful answer\.$/);
    await done();
    expect(sys.model.messageRequests).toHaveLength(1);
  }, 30_000);

  it('should switch agents, start sessions, remember and forget through commands', async () => {
    const agents = client(sys.url);
    await agents.post('/agents', { name: 'jarvis', persona: 'A butler.' });
    let sent = sys.telegram.sendText(ALICE, '/agent jarvis');
    await replyTo(sys.telegram, sent, /You now talk to jarvis/);
    sent = sys.telegram.sendText(ALICE, '/remember I take my tea with lemon');
    await replyTo(sys.telegram, sent, /jarvis will remember that/);
    const stored = (await agents.get('/memories', { 'x-alfred-agent': 'jarvis' })).body.memories;
    expect(stored.map((m: { content: string }) => m.content)).toContain('I take my tea with lemon');

    sent = sys.telegram.sendText(ALICE, '/forget');
    await replyTo(sys.telegram, sent, /jarvis forgot it/);
    expect((await agents.get('/memories', { 'x-alfred-agent': 'jarvis' })).body.memories).toHaveLength(0);

    sent = sys.telegram.sendText(ALICE, '/new');
    const created = await replyTo(sys.telegram, sent, /New conversation with jarvis/);
    const id = /session ([\w-]+)/.exec(created.text)![1]!;
    sent = sys.telegram.sendText(ALICE, '/status');
    const status = await replyTo(sys.telegram, sent, /Agent: jarvis/);
    expect(status.text).toContain(`Session: ${id} (0 messages`);

    sent = sys.telegram.sendText(BOB, '/agent alfred');
    await replyTo(sys.telegram, sent, /You may not talk to alfred/);
    sent = sys.telegram.sendText(ALICE, '/agent alfred');
    await replyTo(sys.telegram, sent, /You now talk to alfred/);
  });
}
