import {
  ALICE,
  BOB,
  MALLORY,
  repliesAfter,
  replyTo,
  startChannelSystem,
  type ChannelSystem,
} from './channels-harness.js';
import { client } from './harness.js';
import type { Mode } from './harness.js';
import { pollUntil, type ScriptedBlock } from '#testing';

const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });

/**
 * What a person does in Telegram, end to end: the real grammY against the loopback Bot API, the loopback model behind
 * the agents.
 */
export function channelsSuite(mode: Mode): void {
  let sys: ChannelSystem;

  beforeAll(async () => {
    sys = await startChannelSystem(mode);
  }, 60_000);
  afterAll(() => sys?.stop());
  beforeEach(() => sys.model.clear());

  const sessionsOf = async (agent: string) =>
    (await client(sys.url).get('/sessions', { 'x-alfred-agent': agent })).body.sessions as Array<{
      id: string;
      message_count: number;
      metadata: Record<string, unknown>;
    }>;
  const messagesOf = async (chatId: number, agent = 'alfred') =>
    (await sessionsOf(agent)).find((s) => s.metadata.chat_id === chatId)?.message_count ?? 0;
  /** Each test talks in a chat of its own (a group Alice is in), so no test meets another's running turn. */
  let chats = 0;
  const newChat = () => -1_000_000 - ++chats;
  /**
   * Sends a message in a new chat and waits, on `done()`, until its turn is written to the session (the reply shows
   * before).
   */
  const turn = async (text: string, written: number) => {
    const chatId = newChat();
    const sent = sys.telegram.sendText(ALICE, text, { chatId });
    return {
      sent,
      chatId,
      done: () => pollUntil(async () => (await messagesOf(chatId)) >= written, 10_000, 'the turn to be written'),
    };
  };

  it('should stream a reply by editing one message within the edit interval, the chat kept in a session', async () => {
    const text =
      'Paris is the capital of **France**. It has been the capital for a very long time, and it is known for ' +
      'the `Louvre`.';
    sys.model.script({ content: [{ type: 'text', text }], streamPieces: 8, eventDelayMs: 120 });
    const { sent, done } = await turn('What is the capital of France?', 2);
    const reply = await replyTo(sys.telegram, sent, /Louvre\.$/);
    await done();

    expect(reply.versions.length).toBeGreaterThan(2);
    // The first message (what the notification shows) is a whole first sentence, not a few characters.
    expect(reply.versions[0]!.text).toBe('Paris is the capital of France.');
    // The next edit leaves only a full interval (300 ms) after the previous call returned.
    for (const [i, v] of reply.versions.entries())
      if (i > 0) expect(v.at - reply.versions[i - 1]!.at).toBeGreaterThanOrEqual(299);
    expect(reply.text).toBe(
      'Paris is the capital of France. It has been the capital for a very long time, and it is known for the Louvre.',
    );
    expect(reply.entities).toEqual([
      { type: 'bold', offset: 24, length: 6 },
      { type: 'code', offset: 102, length: 6 },
    ]);
    const typing = sys.telegram
      .callsOf('sendChatAction')
      .filter((c) => c.params.chat_id === sent.chat.id && c.params.action === 'typing');
    expect(typing[0]!.at).toBeLessThanOrEqual(reply.versions[0]!.at);
    expect(repliesAfter(sys.telegram, sent.chat.id, sent)).toHaveLength(1);

    const session = (await sessionsOf('alfred')).find((s) => s.metadata.chat_id === sent.chat.id)!;
    const view = (await client(sys.url).get(`/sessions/${session.id}`)).body;
    expect(view.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(view.messages[0].content).toBe('What is the capital of France?');
  }, 30_000);

  it('should send the first message after a short wait, typing meanwhile, when no sentence ends early', async () => {
    const text = 'Thinking about the quickest way across town for you right now and it is the tram';
    sys.model.script({ content: [{ type: 'text', text }], streamPieces: 12, eventDelayMs: 200 });
    const { sent, done } = await turn('How do I get across town?', 2);
    const reply = await replyTo(sys.telegram, sent, /it is the tram$/);
    await done();
    const asked = sys.model.messageRequests.at(-1)!.at;
    const typing = sys.telegram.callsOf('sendChatAction').filter((c) => c.params.chat_id === sent.chat.id);
    // No sentence ended: the first message waited about the configured second (1,000 ms) after the first words.
    expect(reply.versions[0]!.at - asked).toBeGreaterThanOrEqual(1_000);
    expect(reply.versions[0]!.text.split(' ').length).toBeGreaterThan(3);
    expect(typing.length).toBeGreaterThan(0);
    expect(typing[0]!.at).toBeLessThan(reply.versions[0]!.at);
    expect(reply.text).toBe(text);
  }, 30_000);

  it('should register its commands for the command menu, as /help lists them', async () => {
    const commands = sys.telegram.myCommands.map((c) => c.command);
    expect(commands).toEqual(['new', 'agent', 'compact', 'remember', 'forget', 'status', 'cancel', 'id', 'help']);
    const sent = sys.telegram.sendText(ALICE, '/help', { chatId: newChat() });
    const help = await replyTo(sys.telegram, sent, /Commands:/);
    for (const c of sys.telegram.myCommands) expect(help.text).toContain(c.description);
  }, 30_000);

  it('should ask for a confirmation with buttons and go on below them when the button is tapped', async () => {
    sys.model.script(
      {
        content: [{ type: 'text', text: 'Let me turn on recall first.' }, tool('activate_skill', { name: 'recall' })],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Recall is active now.' }] },
    );
    const { sent, done } = await turn('Turn on recall, please.', 4);
    const ask = await replyTo(sys.telegram, sent, /asks to activate the skill “recall”/);
    const buttons = (ask.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> })
      .inline_keyboard[0]!;
    expect(buttons.map((b) => b.text)).toEqual(['✅ Approve', '❌ Decline']);

    sys.telegram.tap(ALICE, ask, buttons[0]!.callback_data);
    const after = await replyTo(sys.telegram, sent, /^Recall is active now\.$/);
    await done();
    // What came before the buttons stays above them; the answer continues in a new message below them.
    const replies = repliesAfter(sys.telegram, sent.chat.id, sent);
    expect(replies.map((m) => m.message_id)).toEqual([...replies.map((m) => m.message_id)].sort((a, b) => a - b));
    expect(replies.map((m) => m.text.split('\n')[0])).toEqual([
      'Let me turn on recall first.',
      expect.stringMatching(/^🔐 alfred asks/),
      'Recall is active now.',
    ]);
    expect(after.message_id).toBeGreaterThan(ask.message_id);
    expect(ask.text).toMatch(/✅ Approved by @alice$/);
    expect(ask.reply_markup).toBeUndefined();
    expect(sys.telegram.callsOf('answerCallbackQuery').at(-1)!.params.text).toBe('Approved');
    const toolResult = (sys.model.messageRequests.at(-1)!.body.messages as any[]).at(-1).content[0];
    expect(toolResult.is_error).toBeUndefined();
  }, 30_000);

  it('should split a long reply into messages under the limit without breaking its formatting', async () => {
    const code = Array.from(
      { length: 120 },
      (_, i) => `const line${i} = ${i}; // a line of the example that keeps going`,
    ).join('\n');
    const long = `Here is the **whole file**:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is **all**.`;
    sys.model.script({ content: [{ type: 'text', text: long }] });
    const { sent, done } = await turn('Show me the whole file.', 2);
    await replyTo(sys.telegram, sent, /That is all\.$/);
    await done();
    const parts = repliesAfter(sys.telegram, sent.chat.id, sent);

    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const p of parts) expect(p.text.length).toBeLessThanOrEqual(4096);
    const pres = parts.map((p) =>
      (p.entities as Array<{ type: string; language?: string }> | undefined)?.find((e) => e.type === 'pre'),
    );
    expect(pres.filter(Boolean).length).toBeGreaterThanOrEqual(2);
    for (const pre of pres.filter(Boolean)) expect(pre!.language).toBe('ts');
    expect(parts.map((p) => p.text).join('\n')).toContain('const line119 = 119;');
    expect(parts[0]!.entities).toContainEqual({ type: 'bold', offset: 12, length: 10 });
  }, 30_000);

  it('should wait out a 429 for its retry_after and still deliver the whole reply', async () => {
    const chatId = newChat();
    sys.telegram.failNext(
      'editMessageText',
      { error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 },
      { chatId },
    );
    sys.model.script({
      content: [{ type: 'text', text: 'Counting now. One, two, three, four, five, six, seven, eight.' }],
      streamPieces: 6,
      eventDelayMs: 100,
    });
    const sent = sys.telegram.sendText(ALICE, 'Count to eight.', { chatId });
    const done = () => pollUntil(async () => (await messagesOf(chatId)) >= 2, 10_000, 'the turn to be written');
    await replyTo(sys.telegram, sent, /eight\.$/);
    await done();

    const edits = sys.telegram.callsOf('editMessageText').filter((c) => c.params.chat_id === chatId);
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

    expect(sys.telegram.botMessages(MALLORY.id).map((m) => m.text)).toEqual([
      `Your Telegram user id is ${MALLORY.id}.`,
      `Your Telegram user id is ${MALLORY.id}.`,
    ]);
    expect(sys.model.requests.length).toBe(before);
    expect((await sessionsOf('alfred')).some((s) => s.metadata.chat_id === MALLORY.id)).toBe(false);
  }, 30_000);

  it('should queue a message sent while a reply is written, say so, and answer it next', async () => {
    sys.model.script(
      {
        content: [{ type: 'text', text: 'A slow and thoughtful answer. It takes its time.' }],
        streamPieces: 6,
        eventDelayMs: 200,
      },
      { content: [{ type: 'text', text: 'Yes, I am here.' }] },
      { content: [{ type: 'text', text: 'Still here after that.' }] },
    );
    const { sent: first, chatId, done } = await turn('Think about it slowly.', 2);
    await replyTo(sys.telegram, first, /^A slow and thoughtful answer\./);
    const second = sys.telegram.sendText(ALICE, 'Are you there?', { chatId });
    const queued = await replyTo(sys.telegram, second, /^📥 Got it\. I will answer this right after the current reply/);
    expect(queued.reply_to_message_id).toBe(second.message_id);
    const firstReply = await replyTo(sys.telegram, first, /It takes its time\.$/);
    const answer = await replyTo(sys.telegram, second, /^Yes, I am here\.$/);
    expect(answer.message_id).toBeGreaterThan(firstReply.message_id);
    // At the very end of an answer (its turn written, its last edit maybe still pending) a message is taken too.
    await done();
    const third = sys.telegram.sendText(ALICE, 'And now?', { chatId });
    await replyTo(sys.telegram, third, /^Still here after that\.$/);
    expect(sys.model.messageRequests).toHaveLength(3);
    await pollUntil(async () => (await messagesOf(chatId)) === 6, 10_000, 'all three turns written');
    expect(sys.telegram.botMessages(chatId).some((m) => /not taken|still answering/.test(m.text))).toBe(false);
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

  it('should offer memories to forget as buttons and forget the one tapped', async () => {
    const api = client(sys.url);
    await api.post('/memories', { content: 'Alice likes green tea' });
    await api.post('/memories', { content: 'Alice lives in Lyon' });
    const sent = sys.telegram.sendText(ALICE, '/forget green tea');
    const offer = await replyTo(sys.telegram, sent, /Which memory should I forget/);
    const buttons = (
      offer.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }
    ).inline_keyboard.map((r) => r[0]!);
    const tea = buttons.find((b) => b.text.includes('green tea'))!;
    sys.telegram.tap(ALICE, offer, tea.callback_data);
    await sys.telegram.waitFor(() => /forgot it/.test(offer.text), 'the offer to be answered');
    const left = (await api.get('/memories')).body.memories.map((m: { content: string }) => m.content);
    expect(left).toContain('Alice lives in Lyon');
    expect(left).not.toContain('Alice likes green tea');
  }, 30_000);

  it("should compact the chat's conversation on /compact", async () => {
    sys.model.script({ content: [{ type: 'text', text: 'Lyon is lovely in spring.' }] });
    const { sent: asked, chatId, done } = await turn('Tell me about Lyon.', 2);
    await replyTo(sys.telegram, asked, /^Lyon is lovely in spring\.$/);
    await done();
    sys.model.script({
      content: [{ type: 'text', text: 'Summary: Alice asked about Lyon; the agent praised it in spring.' }],
    });
    const sent = sys.telegram.sendText(ALICE, '/compact', { chatId });
    const compacted = await replyTo(sys.telegram, sent, /Compacted|⚠️/);
    expect(compacted.text).toMatch(/^🗜 Compacted: [\d,]+ → [\d,]+ tokens \(\d+ messages summarised\)\.$/);
  }, 30_000);

  it('should stop a running reply on /cancel', async () => {
    sys.model.script({
      content: [{ type: 'text', text: 'This answer takes far too long to write.' }],
      streamPieces: 20,
      eventDelayMs: 300,
    });
    const { sent, chatId } = await turn('Write slowly.', 2);
    await replyTo(sys.telegram, sent, /^This/);
    const cancel = sys.telegram.sendText(ALICE, '/cancel', { chatId });
    await replyTo(sys.telegram, cancel, /Stopping the reply/);
    const reply = await replyTo(sys.telegram, sent, /⚠️ .*cancel/i);
    expect(reply.text).not.toContain('too long to write.');
  }, 30_000);

  it('should keep one conversation per forum topic and answer inside the topic', async () => {
    const group = -100_4242;
    sys.model.script(
      { content: [{ type: 'text', text: 'Answer in topic seven.' }] },
      { content: [{ type: 'text', text: 'Answer in topic eight.' }] },
    );
    const seven = sys.telegram.sendText(ALICE, 'Hello from topic 7', { chatId: group, threadId: 7 });
    await replyTo(sys.telegram, seven, /topic seven/);
    const eight = sys.telegram.sendText(ALICE, 'Hello from topic 8', { chatId: group, threadId: 8 });
    const reply = await replyTo(sys.telegram, eight, /topic eight/);
    expect(reply.message_thread_id).toBe(8);
    await pollUntil(
      async () =>
        (await sessionsOf('alfred')).filter((s) => s.metadata.chat_id === group && s.message_count === 2).length === 2,
      10_000,
      'two topic sessions',
    );
    const topics = (await sessionsOf('alfred'))
      .filter((s) => s.metadata.chat_id === group)
      .map((s) => s.metadata.thread_id);
    expect(topics.sort()).toEqual([7, 8]);
  }, 30_000);
}
