import type { ScriptedBlock } from '#testing';
import { client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem } from './agent-harness.js';

const KEY = 'acme-key-0123456789abcdef';
const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });

/** With API keys required, a skill's curl run by the agent acts with its caller's key (and tenant). */
describe('agent turns on a gateway that requires API keys', () => {
  let sys: AgentSystem;

  beforeAll(async () => {
    sys = await startAgentSystem('embedded', { ALFRED_API_KEYS: `${KEY}=acme` });
  }, 60_000);
  afterAll(() => sys?.stop());

  it("should run the remember skill's curl with the caller's key, storing the memory in their tenant", async () => {
    const api = client(sys.url, { authorization: `Bearer ${KEY}` });
    const id = (await api.post('/sessions', {})).body.id as string;
    sys.model.script(
      {
        content: [
          tool('bash', {
            // The header exactly as the bundled skills write it.
            command:
              `curl -sS -H "Authorization: Bearer \${ALFRED_API_KEY:-}" --fail-with-body -X POST ` +
              `"$ALFRED_API_URL/memories" -H 'Content-Type: application/json' -d '{"content": "Prefers the ` +
              `staging cluster for tests"}'`,
          }),
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'Noted.' }] },
    );
    const { status, events } = await streamTurn(sys.url, id, 'Remember: staging for tests.', {
      authorization: `Bearer ${KEY}`,
    });
    expect(status).toBe(200);
    expect(named(events, 'tool_result')[0]).toMatchObject({
      name: 'bash',
      is_error: false,
      content: expect.stringContaining('[exit code 0]'),
    });
    expect((await api.get('/memories')).body.memories.map((m: { content: string }) => m.content)).toEqual([
      'Prefers the staging cluster for tests',
    ]);
    // The key never lands in the session.
    expect(JSON.stringify((await api.get(`/sessions/${id}`)).body)).not.toContain(KEY);
  }, 30_000);
});
