import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AnthropicLoopback,
  deleteRedisKeysWithPrefix,
  describeWithNats,
  describeWithRedis,
  TelegramLoopback,
  testServers,
} from '#testing';
import { startAgentSystem, type AgentSystem } from './agent-harness.js';
import { ALICE, channelEnv, repliesAfter, replyTo } from './channels-harness.js';
import { client } from './harness.js';
import { launchSource, type SourceProcess } from './source-process.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();

const QUESTION = 'Tell me the whole story, slowly.';
const FIRST_WORDS = 'Once upon a time there was a butler who kept every promise and wrote everything down';
/**
 * A reply the model writes slowly (about half a minute): long enough to kill and restart a process while it streams.
 */
const slow = (text: string) => ({ content: [{ type: 'text' as const, text }], streamPieces: 40, eventDelayMs: 650 });

/** The update's journey as Telegram saw it: fetched once by getUpdates, confirmed once. */
function expectFetchedAndConfirmedOnce(telegram: TelegramLoopback): void {
  const ids = [...telegram.updates.served.keys()];
  expect(ids).toHaveLength(1);
  expect(telegram.updates.served.get(ids[0]!)).toBe(1);
  expect(telegram.updates.confirmed).toEqual(ids);
}

describe('Telegram channel restarted mid-turn (processes killed with SIGKILL)', () => {
  let telegram: TelegramLoopback;
  let model: AnthropicLoopback;
  let dir: string;
  const running: SourceProcess[] = [];

  beforeEach(async () => {
    telegram = await TelegramLoopback.start();
    model = await AnthropicLoopback.start();
    dir = await mkdtemp(join(tmpdir(), 'alfred-channels-restart-'));
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.kill();
    await telegram.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  const modelEnv = () => ({
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: model.apiKey,
    ALFRED_MODEL_MAX_RETRIES: '0',
    ALFRED_EMBEDDER: 'hash',
    ALFRED_LOG_LEVEL: 'info',
  });
  const launch = (entry: string, env: Record<string, string>) => {
    const p = launchSource(entry, env);
    running.push(p);
    return p;
  };

  it('embedded: the process dies mid-reply; restarted, it answers the message once, in the same reply', async () => {
    const env = { ...modelEnv(), ...channelEnv(telegram), ALFRED_DATA_DIR: dir, ALFRED_API_PORT: '0' };
    let alfred = launch('services/main.ts', env);
    await alfred.waitFor(/Telegram channel connected/);
    model.script(slow(`${FIRST_WORDS}, and this part is never seen.`), {
      content: [{ type: 'text', text: 'The whole story, told once.' }],
    });

    const sent = telegram.sendText(ALICE, QUESTION);
    const partial = await replyTo(telegram, sent, /^Once upon/);
    await alfred.kill();
    expect(partial.text.length).toBeLessThan(FIRST_WORDS.length);

    alfred = launch('services/main.ts', env);
    const url = (await alfred.waitFor(/Alfred is listening on (http:\/\/[\d.:]+)/))[1]!;
    await replyTo(telegram, sent, /^The whole story, told once\.$/, 60_000);

    expect(repliesAfter(telegram, ALICE.id, sent).map((m) => m.message_id)).toEqual([partial.message_id]);
    expectFetchedAndConfirmedOnce(telegram);
    expect(model.messageRequests).toHaveLength(2);
    const api = client(url);
    const [session] = (await api.get('/sessions')).body.sessions;
    const view = (await api.get(`/sessions/${session.id}`)).body;
    expect(view.messages).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: [{ type: 'text', text: 'The whole story, told once.' }] },
    ]);

    for (const run of running) expect(run.output()).not.toContain(telegram.token.split(':')[1]);
    // The chat goes on after the restart.
    model.script({ content: [{ type: 'text', text: 'Still here.' }] });
    const next = telegram.sendText(ALICE, 'Are you back?');
    await replyTo(telegram, next, /^Still here\.$/, 30_000);
    expect(await alfred.stop()).toBe(0);
  }, 300_000);

  describeNats('over NATS', () => {
    describeRedis('with Redis', () => {
      let sys: AgentSystem | undefined;
      // biome-ignore lint/suspicious/noDuplicateTestHooks: describeRedis is jest's describe; this is its own hook
      afterEach(async () => {
        await sys?.stop();
        if (sys) await deleteRedisKeysWithPrefix(testServers.redisUrl, sys.env.ALFRED_REDIS_PREFIX!);
        sys = undefined;
      });

      it('distributed: channels dies mid-reply; its successor follows the running turn and answers once', async () => {
        sys = await startAgentSystem('nats', {}, 0);
        const common = {
          ...channelEnv(telegram),
          NATS_URL: testServers.natsUrl,
          ALFRED_SUBJECT_PREFIX: sys.subjectPrefix!,
          REDIS_URL: testServers.redisUrl,
          ALFRED_REDIS_PREFIX: sys.env.ALFRED_REDIS_PREFIX!,
          ALFRED_DATA_DIR: dir,
          ALFRED_LOG_LEVEL: 'info',
          ALFRED_CHANNELS_ACK_WAIT_MS: '2000',
        };
        // The agents answer through the system's own loopback model.
        const story = `${FIRST_WORDS}, and the end of it arrives after the restart.`;
        sys.model.script(slow(story));
        let channels = launch('services/channels/src/main.ts', common);
        await channels.waitFor(/Telegram channel connected/);

        const sent = telegram.sendText(ALICE, QUESTION);
        const partial = await replyTo(telegram, sent, /^Once upon/);
        await channels.kill();
        channels = launch('services/channels/src/main.ts', common);
        await channels.waitFor(/its turn still runs; following it/);
        // The successor missed the text streamed before it came; the turn's final message restores all of it.
        await replyTo(telegram, sent, /^Once upon a time.*after the restart\.$/s, 60_000);

        expect(repliesAfter(telegram, ALICE.id, sent).map((m) => m.message_id)).toEqual([partial.message_id]);
        expect(repliesAfter(telegram, ALICE.id, sent)[0]!.text).toBe(story);
        expectFetchedAndConfirmedOnce(telegram);
        expect(sys.model.messageRequests).toHaveLength(1);
        const api = client(sys.url);
        const [session] = (await api.get('/sessions')).body.sessions;
        const view = (await api.get(`/sessions/${session.id}`)).body;
        expect(
          view.messages.filter((m: { role: string; content: unknown }) => m.role === 'user' && m.content === QUESTION),
        ).toHaveLength(1);
        for (const run of running) expect(run.output()).not.toContain(telegram.token.split(':')[1]);
        expect(await channels.stop()).toBe(0);
      }, 300_000);
    });
  });
});
