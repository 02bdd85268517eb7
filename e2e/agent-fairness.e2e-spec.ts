import { pollUntil } from '#testing';
import { client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem, type SseEvent } from './agent-harness.js';

const KEY_A = 'tenant-a-key-0123456789abcdef';
const KEY_B = 'tenant-b-key-0123456789abcdef';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A worker's turn slots are shared by tenant: one tenant's flood waits its turn instead of holding every slot. */
describe('agent turns of several tenants on one worker', () => {
  let sys: AgentSystem;

  beforeAll(async () => {
    sys = await startAgentSystem('embedded', {
      ALFRED_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`,
      ALFRED_MAX_CONCURRENT_TURNS: '2',
      ALFRED_MAX_TENANT_TURNS: '1',
      ALFRED_MEMORY_CONTEXT_LIMIT: '0',
    });
  }, 60_000);
  afterAll(() => sys?.stop());

  const session = async (key: string) => (await client(sys.url, bearer(key)).post('/sessions', {})).body.id as string;

  it("should start another tenant's turn while one tenant holds its share, then the flood's next turn", async () => {
    const [a1, a2, b1] = [await session(KEY_A), await session(KEY_A), await session(KEY_B)];
    sys.model.script(
      { content: [{ type: 'text', text: 'A1 answered.' }], delayMs: 20_000 },
      { content: [{ type: 'text', text: 'B answered.' }] },
      { content: [{ type: 'text', text: 'A2 answered.' }] },
    );
    let resolveStarted!: () => void;
    const startedA1 = new Promise<void>((resolve) => (resolveStarted = resolve));
    const turnA1 = streamTurn(sys.url, a1, 'slow', bearer(KEY_A), (e: SseEvent) =>
      e.event === 'started' ? resolveStarted() : undefined,
    );
    await startedA1;
    await pollUntil(() => sys.model.messageRequests.length === 1, 5_000, "A1's model call");
    const turnA2 = streamTurn(sys.url, a2, 'waits for its tenant', bearer(KEY_A));
    const turnB = streamTurn(sys.url, b1, 'quick', bearer(KEY_B));

    // B takes the second slot although A asked first: A is at its share (one turn) while its first turn runs.
    expect(named((await turnB).events, 'message')[0].text).toBe('B answered.');
    expect(sys.model.messageRequests).toHaveLength(2);
    expect(sys.model.messageRequests[0]!.closedEarlyAt).toBeUndefined();

    expect((await client(sys.url, bearer(KEY_A)).delete(`/sessions/${a1}/turns/current`)).status).toBe(200);
    expect(named((await turnA1).events, 'done')[0].status).toBe('cancelled');
    expect(named((await turnA2).events, 'message')[0].text).toBe('A2 answered.');
  }, 40_000);
});
