import { describeWithNats, describeWithRedis } from '#testing';
import { freePort } from './agent-harness.js';
import {
  ALICE,
  replyTo,
  startChannelSystem,
  startTlsProxy,
  type ChannelSystem,
  type TlsProxy,
} from './channels-harness.js';
import { client, type Mode } from './harness.js';

const describeNats = await describeWithNats();
const describeRedis = await describeWithRedis();
const KEY = 'a-key-of-sixteen-chars-or-more';

function webhookSuite(mode: Mode): void {
  let sys: ChannelSystem;
  let proxy: TlsProxy;
  let hook: string;

  beforeAll(async () => {
    // Telegram calls https:// webhooks only: the gateway sits behind a TLS proxy, as it would in a deployment.
    const port = await freePort();
    proxy = await startTlsProxy(`http://127.0.0.1:${port}`);
    hook = `${proxy.url}/channels/telegram/default/webhook`;
    sys = await startChannelSystem(
      mode,
      { ALFRED_API_PORT: String(port), ALFRED_TELEGRAM_WEBHOOK_URL: proxy.url, ALFRED_API_KEYS: `${KEY}=default` },
      { webhookCa: proxy.ca },
    );
  }, 60_000);
  afterAll(async () => {
    await sys?.stop();
    await proxy?.close();
  });

  it('should register the webhook with a secret other than the token; updates come via the gateway only', async () => {
    const set = sys.telegram.callsOf('setWebhook')[0]!;
    expect(set.params.url).toBe(hook);
    expect(typeof set.params.secret_token).toBe('string');
    expect(set.params.secret_token).not.toContain(sys.telegram.token.split(':')[1]);

    sys.model.script({ content: [{ type: 'text', text: 'Hello from behind the gateway.' }] });
    const sent = sys.telegram.sendText(ALICE, 'Are you reachable by webhook?');
    await replyTo(sys.telegram, sent, /^Hello from behind the gateway\.$/);
    expect(sys.telegram.updates.webhookCalls.filter((c) => c.status === 200).map((c) => c.update_id)).toEqual(
      sys.telegram.updates.confirmed,
    );
    expect(sys.telegram.callsOf('getUpdates')).toHaveLength(0);
  }, 30_000);

  it('should refuse webhook calls without the secret or for another tenant, whatever the API key', async () => {
    const api = client(sys.url);
    const update = {
      update_id: 1,
      message: { message_id: 1, date: 0, chat: { id: ALICE.id, type: 'private' }, from: ALICE, text: 'forged' },
    };
    const secret = sys.telegram.callsOf('setWebhook')[0]!.params.secret_token as string;
    expect((await api.post('/channels/telegram/default/webhook', update)).status).toBe(401);
    expect(
      (await api.post('/channels/telegram/default/webhook', update, { 'x-telegram-bot-api-secret-token': 'wrong' }))
        .status,
    ).toBe(401);
    expect(
      (await api.post('/channels/telegram/other/webhook', update, { 'x-telegram-bot-api-secret-token': secret }))
        .status,
    ).toBe(401);
    expect(
      (
        await api.post(
          '/channels/telegram/default/webhook',
          { nope: true },
          { 'x-telegram-bot-api-secret-token': secret },
        )
      ).status,
    ).toBe(400);
    expect((await api.get('/memories')).status).toBe(401);
    expect(sys.telegram.botMessages(ALICE.id).some((m) => m.text.includes('forged'))).toBe(false);
  }, 30_000);
}

describe('Telegram webhook behind the gateway (embedded)', () => webhookSuite('embedded'));
describeNats('Telegram webhook behind the gateway (distributed)', () => {
  describeRedis('with Redis', () => webhookSuite('nats'));
});
