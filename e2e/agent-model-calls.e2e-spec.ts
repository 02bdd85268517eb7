import { pollUntil } from '#testing';
import { client, type Client } from './harness.js';
import { named, startAgentSystem, streamTurn, type AgentSystem, type SseEvent } from './agent-harness.js';

/**
 * A turn's model request ends with the turn: cancel, deadline and the concurrency limit, seen from the model's side.
 */
describe('model calls end with their turn', () => {
  let sys: AgentSystem;
  let api: Client;

  beforeAll(async () => {
    sys = await startAgentSystem('embedded', {
      ALFRED_MAX_CONCURRENT_TURNS: '1',
      ALFRED_MODEL_MAX_RETRIES: '2',
      ALFRED_TURN_HEARTBEAT_MS: '200',
      ALFRED_TURN_DEADLINE_MS: '4000',
      ALFRED_MEMORY_CONTEXT_LIMIT: '0',
    });
    api = client(sys.url);
  }, 60_000);
  afterAll(() => sys?.stop());
  beforeEach(() => sys.model.clear());

  const session = async () => (await api.post('/sessions', {})).body.id as string;
  const once = (name: string) => {
    let resolve!: (e: SseEvent) => void;
    const seen = new Promise<SseEvent>((r) => (resolve = r));
    return { seen, onEvent: (e: SseEvent) => (e.event === name ? resolve(e) : undefined) };
  };

  it('should abort the model request on cancel, and the waiting turn gets the slot only after it ended', async () => {
    const [a, b] = [await session(), await session()];
    sys.model.script(
      { content: [{ type: 'text', text: 'too late' }], delayMs: 20_000 },
      { content: [{ type: 'text', text: 'B answered.' }] },
    );
    const started = once('started');
    const turnA = streamTurn(sys.url, a, 'slow one', {}, started.onEvent);
    await started.seen;
    await pollUntil(() => sys.model.messageRequests.length === 1, 5_000);
    const turnB = streamTurn(sys.url, b, 'quick one');

    expect((await api.delete(`/sessions/${a}/turns/current`)).status).toBe(200);

    expect(named((await turnA).events, 'done')[0].status).toBe('cancelled');
    expect(named((await turnB).events, 'message')[0].text).toBe('B answered.');
    const [reqA, reqB] = sys.model.messageRequests;
    expect(reqA!.closedEarlyAt).toBeDefined();
    expect(reqB!.at).toBeGreaterThanOrEqual(reqA!.closedEarlyAt!);
    expect(sys.model.messageRequests).toHaveLength(2);
  }, 30_000);

  it('should abort the model request at the deadline', async () => {
    const id = await session();
    sys.model.script({ content: [{ type: 'text', text: 'too late' }], delayMs: 20_000 });

    const { events } = await streamTurn(sys.url, id, 'take your time');

    expect(named(events, 'error')[0].error.code).toBe('DEADLINE');
    expect(named(events, 'done')[0].status).toBe('failed');
    await pollUntil(() => sys.model.messageRequests[0]!.closedEarlyAt !== undefined, 5_000);
    expect(sys.model.messageRequests).toHaveLength(1);
  }, 30_000);

  it('should tell the stream about a retry, and make none once the turn is cancelled', async () => {
    const id = await session();
    sys.model.fail(529, { retryAfter: '30' }).reply('never sent');
    const retrying = once('retrying');
    const turn = streamTurn(sys.url, id, 'overloaded?', {}, retrying.onEvent);
    const { data } = await retrying.seen;
    expect(data).toMatchObject({ attempt: 1, max_attempts: 3, delay_ms: 30_000, error: { code: 'MODEL_ERROR' } });

    expect((await api.delete(`/sessions/${id}/turns/current`)).status).toBe(200);

    expect(named((await turn).events, 'done')[0].status).toBe('cancelled');
    expect(sys.model.messageRequests).toHaveLength(1);
    expect(sys.model.pending).toBe(1);
  }, 30_000);
});
