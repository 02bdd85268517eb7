import { pollUntil, type ScriptedBlock } from '#testing';
import { ALICE, replyTo, startChannelSystem, type ChannelSystem } from './channels-harness.js';
import { client } from './harness.js';

const KEY = 'acme-key-0123456789abcdef';
const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });

/**
 * A turn started by a chat message, on a gateway that requires keys: the agent's bash gets a credential scoped to
 * the bot's tenant, the agent and the session (never a key), the bundled skills' curl works with it, and it ends with
 * the turn.
 */
describe('Telegram turns: the agent reaches the API with a scoped credential', () => {
  let sys: ChannelSystem;

  beforeAll(async () => {
    sys = await startChannelSystem('embedded', { ALFRED_API_KEYS: `${KEY}=acme`, ALFRED_TELEGRAM_TENANT: 'acme' });
  }, 60_000);
  afterAll(() => sys?.stop());

  it("should let the remember skill's curl write to the bot's tenant, then revoke the credential", async () => {
    sys.model.script(
      {
        content: [
          tool('bash', {
            // The header exactly as the bundled skills write it; the credential is echoed so the test can try it
            // afterwards.
            command:
              `echo "CREDENTIAL=\${ALFRED_API_KEY:-none}"; curl -sS -H "Authorization: Bearer ` +
              `\${ALFRED_API_KEY:-}" -H "X-Alfred-Agent: \${ALFRED_AGENT:-alfred}" ` +
              `--fail-with-body -X POST "$ALFRED_API_URL/memories" -H 'Content-Type: application/json' -d ` +
              `'{"content": "Alice takes her coffee black"}'`,
          }),
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Noted: black coffee.' }] },
    );
    const sent = sys.telegram.sendText(ALICE, 'Remember that I take my coffee black.', { chatId: -7_000_001 });
    await replyTo(sys.telegram, sent, /Noted: black coffee\./);

    const api = client(sys.url, { authorization: `Bearer ${KEY}` });
    expect((await api.get('/memories')).body.memories.map((m: { content: string }) => m.content)).toEqual([
      'Alice takes her coffee black',
    ]);

    const toolResult = JSON.stringify(sys.model.messageRequests[1]!.body.messages);
    expect(toolResult).toContain('[exit code 0]');
    const credential = /CREDENTIAL=(alfred_sc\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(toolResult)?.[1];
    expect(credential).toBeDefined();
    expect(toolResult).not.toContain(KEY);
    // Ended with the turn: the gateway no longer accepts it.
    await pollUntil(
      async () => (await client(sys.url, { authorization: `Bearer ${credential}` }).get('/memories')).status === 401,
      10_000,
      'the credential to be revoked',
    );
  }, 60_000);
});
