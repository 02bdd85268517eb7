import { AnthropicLoopback } from './anthropic-loopback.js';

function post(url: string, body: unknown, headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function sseEvents(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim().length > 0)
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? 'null');
      return { event, data };
    });
}

const request = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

describe(AnthropicLoopback.name, () => {
  let loopback: AnthropicLoopback;

  beforeEach(async () => {
    loopback = await AnthropicLoopback.start({ apiKey: 'k1' });
  });
  afterEach(() => loopback.close());

  describe('auth', () => {
    it('should accept the key as x-api-key and as a Bearer token', async () => {
      loopback.reply('a').reply('b');

      const viaHeader = await post(`${loopback.url}/v1/messages`, request, { 'x-api-key': 'k1' });
      const viaBearer = await post(`${loopback.url}/v1/messages`, request, { authorization: 'Bearer k1' });

      expect(viaHeader.status).toBe(200);
      expect(((await viaHeader.json()) as any).content).toEqual([{ type: 'text', text: 'a', citations: null }]);
      expect(viaBearer.status).toBe(200);
    });

    it('should reject a wrong key with 401 in the API error format', async () => {
      const res = await post(`${loopback.url}/v1/messages`, request, { 'x-api-key': 'nope' });

      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect(loopback.requests).toHaveLength(1);
    });
  });

  describe('streaming', () => {
    it('should send the real event sequence with tool input split across input_json_delta chunks', async () => {
      loopback.script({
        content: [
          { type: 'text', text: 'Checking now' },
          { type: 'tool_use', id: 'tu', name: 'bash', input: { command: 'ls -la' } },
        ],
      });

      const res = await post(`${loopback.url}/v1/messages`, { ...request, stream: true }, { 'x-api-key': 'k1' });
      const events = sseEvents(await res.text());

      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const names = events.map((e) => e.event);
      expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
      expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
      const json = events
        .filter((e) => e.data.delta?.type === 'input_json_delta')
        .map((e) => e.data.delta.partial_json);
      expect(json.length).toBeGreaterThan(1);
      expect(JSON.parse(json.join(''))).toEqual({ command: 'ls -la' });
      expect(events.find((e) => e.event === 'message_delta')?.data.delta.stop_reason).toBe('tool_use');
    });
  });

  describe('errors', () => {
    it('should send a scripted error with its retry-after header', async () => {
      loopback.fail(429, { retryAfter: 2 });

      const res = await post(`${loopback.url}/v1/messages`, request, { 'x-api-key': 'k1' });

      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    });

    it('should answer 400 when the script is exhausted', async () => {
      const res = await post(`${loopback.url}/v1/messages`, request, { 'x-api-key': 'k1' });

      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.message).toContain('no scripted reply');
    });
  });

  describe('count_tokens', () => {
    it('should return a deterministic estimate', async () => {
      const a: any = await (
        await post(`${loopback.url}/v1/messages/count_tokens`, request, { 'x-api-key': 'k1' })
      ).json();
      const b = await (await post(`${loopback.url}/v1/messages/count_tokens`, request, { 'x-api-key': 'k1' })).json();

      expect(a.input_tokens).toBeGreaterThan(0);
      expect(b).toEqual(a);
    });
  });
});
