import { AnthropicLoopback } from '#testing';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { LlmClient } from './llm-client.js';
import type { LlmStreamEvent } from './llm.types.js';

async function caught(p: Promise<unknown>): Promise<AlfredError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AlfredError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

async function collect(events: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const out: LlmStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const hello = [{ role: 'user' as const, content: 'Hello' }];

describe(LlmClient.name, () => {
  let loopback: AnthropicLoopback;
  let llm: LlmClient;

  beforeEach(async () => {
    loopback = await AnthropicLoopback.start({ apiKey: 'sk-test-1' });
    llm = new LlmClient({ apiKey: 'sk-test-1', baseUrl: loopback.url, maxRetries: 2, timeoutMs: 5_000 });
  });
  afterEach(() => loopback.close());

  describe('complete', () => {
    it('should return the text of a completion sent with the SDK headers', async () => {
      loopback.reply('Hi there', { usage: { input_tokens: 12, output_tokens: 3 } });

      const result = await llm.complete({ messages: hello, maxTokens: 100 });

      expect(result.text).toBe('Hi there');
      expect(result.stopReason).toBe('end_turn');
      expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 3 });
      const [req] = loopback.messageRequests;
      expect(req.headers.authorization).toBe('Bearer sk-test-1');
      expect(req.headers['anthropic-version']).toBe('2026-10-21');
      expect(req.body).toMatchObject({ model: llm.model, max_tokens: 100, messages: hello });
    });

    it('should return tool_use blocks with their input', async () => {
      loopback.script({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.md' } }] });

      const result = await llm.complete({
        messages: hello,
        maxTokens: 50,
        tools: [{ name: 'read', input_schema: { type: 'object' } }],
      });

      expect(result.toolUses).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.md' } }]);
      expect(result.stopReason).toBe('tool_use');
      expect(loopback.messageRequests[0].body.tools).toEqual([{ name: 'read', input_schema: { type: 'object' } }]);
    });

    it('should mark only the last stable system block with cache_control', async () => {
      loopback.reply('ok').reply('ok');

      await llm.complete({
        system: { stable: ['core rules', 'skill index'], volatile: 'today is Monday' },
        messages: hello,
        maxTokens: 10,
      });
      await llm.complete({ system: { stable: ['core rules'] }, messages: hello, maxTokens: 10, cacheSystem: false });

      expect(loopback.messageRequests[0].body.system).toEqual([
        { type: 'text', text: 'core rules' },
        { type: 'text', text: 'skill index', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'today is Monday' },
      ]);
      expect(loopback.messageRequests[1].body.system).toEqual([{ type: 'text', text: 'core rules' }]);
    });

    it('should fail with MODEL_NOT_CONFIGURED and send nothing when no key is set', async () => {
      const unconfigured = new LlmClient({ baseUrl: loopback.url });

      const err = await caught(unconfigured.complete({ messages: hello, maxTokens: 10 }));

      expect(unconfigured.isConfigured).toBe(false);
      expect(err.code).toBe(ErrorCode.ModelNotConfigured);
      expect(err.status).toBe(503);
      expect(err.message).toContain('ANTHROPIC_API_KEY');
      expect(() => unconfigured.stream({ messages: hello, maxTokens: 10 })).toThrow(AlfredError);
      expect(loopback.requests).toHaveLength(0);
    });

    it('should fail with MODEL_AUTH_FAILED on a rejected key, without retrying', async () => {
      const wrongKey = new LlmClient({ apiKey: 'sk-wrong', baseUrl: loopback.url, maxRetries: 2 });

      const err = await caught(wrongKey.complete({ messages: hello, maxTokens: 10 }));

      expect(err.code).toBe(ErrorCode.ModelAuthFailed);
      expect(err.message).toContain('rejected the key');
      expect(err.details).toMatchObject({ status: 401, type: 'authentication_error' });
      expect(loopback.requests).toHaveLength(1);
    });

    it('should retry a rate-limit storm, then fail with RATE_LIMITED after maxRetries + 1 attempts', async () => {
      for (let i = 0; i < 4; i++) loopback.fail(429, { retryAfter: '0.01' });

      const err = await caught(llm.complete({ messages: hello, maxTokens: 10 }));

      expect(err.code).toBe(ErrorCode.RateLimited);
      expect(err.status).toBe(429);
      expect(err.details).toMatchObject({ retry_after_seconds: 0.01, attempts: 3 });
      expect(loopback.messageRequests).toHaveLength(3);
      expect(loopback.pending).toBe(1);
      expect(loopback.messageRequests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
    });

    it('should succeed when an overloaded (529) answer is followed by a success', async () => {
      loopback.fail(529, { retryAfter: '0.01' }).reply('recovered');

      const result = await llm.complete({ messages: hello, maxTokens: 10 });

      expect(result.text).toBe('recovered');
      expect(loopback.messageRequests).toHaveLength(2);
    });

    it('should fail with MODEL_ERROR when 5xx answers outlast the retries', async () => {
      for (let i = 0; i < 3; i++) loopback.fail(529, { retryAfter: '0.01' });

      const err = await caught(llm.complete({ messages: hello, maxTokens: 10 }));

      expect(err.code).toBe(ErrorCode.ModelError);
      expect(err.status).toBe(502);
      expect(err.message).toContain('overloaded');
      expect(loopback.messageRequests).toHaveLength(3);
    });

    it('should fail with SERVICE_TIMEOUT when the model does not answer in time', async () => {
      const impatient = new LlmClient({ apiKey: 'sk-test-1', baseUrl: loopback.url, maxRetries: 0, timeoutMs: 100 });
      loopback.reply('too late', { delayMs: 2_000 });

      const err = await caught(impatient.complete({ messages: hello, maxTokens: 10 }));

      expect(err.code).toBe(ErrorCode.ServiceTimeout);
    });
  });

  describe('stream', () => {
    it('should yield text deltas and a tool_use whose chunked input the SDK reassembled', async () => {
      const input = { command: 'ls -la /tmp', options: { depth: 2, include: ['a', 'b'] } };
      loopback.script({
        content: [
          { type: 'text', text: 'Let me look at that directory.' },
          { type: 'tool_use', id: 'toolu_9', name: 'bash', input },
        ],
        usage: { input_tokens: 40, output_tokens: 25 },
      });

      const events = await collect(llm.stream({ messages: hello, maxTokens: 200 }));

      const texts = events.filter((e) => e.type === 'text_delta');
      expect(texts.length).toBeGreaterThan(1);
      expect(texts.map((e) => e.text).join('')).toBe('Let me look at that directory.');
      expect(events.filter((e) => e.type !== 'text_delta').map((e) => e.type)).toEqual([
        'tool_use_start',
        'tool_use',
        'message_stop',
      ]);
      expect(events.find((e) => e.type === 'tool_use')).toMatchObject({
        block: { id: 'toolu_9', name: 'bash', input },
      });
      const stop = events.at(-1);
      expect(stop?.type === 'message_stop' && stop.completion).toMatchObject({
        stopReason: 'tool_use',
        usage: { inputTokens: 40, outputTokens: 25 },
      });
      expect(loopback.messageRequests[0].body.stream).toBe(true);
    });

    it('should surface an overloaded error event in the stream as MODEL_ERROR once retries are used up', async () => {
      loopback.script(
        { content: [], streamErrorType: 'overloaded_error' },
        { content: [], streamErrorType: 'overloaded_error' },
        { content: [], streamErrorType: 'overloaded_error' },
      );

      const err = await caught(collect(llm.stream({ messages: hello, maxTokens: 10 })));

      expect(err.code).toBe(ErrorCode.ModelError);
      expect(err.message).toContain('overloaded');
      expect(loopback.messageRequests).toHaveLength(3);
    });

    it('should retry a 429 before the stream starts and announce the retry', async () => {
      loopback.fail(429, { retryAfter: '0.01' }).reply('streamed');

      const events = await collect(llm.stream({ messages: hello, maxTokens: 10 }));

      expect(
        events
          .filter((e) => e.type === 'text_delta')
          .map((e) => e.text)
          .join(''),
      ).toBe('streamed');
      expect(events[0]).toMatchObject({
        type: 'retry',
        attempt: 1,
        maxAttempts: 3,
        delayMs: 10,
        error: { code: ErrorCode.RateLimited },
      });
      expect(loopback.messageRequests).toHaveLength(2);
    });

    it('should abort the request and make no retry once the signal aborts', async () => {
      loopback.fail(503, { retryAfter: '5' }).reply('never');
      const controller = new AbortController();
      const events: string[] = [];

      for await (const e of llm.stream({ messages: hello, maxTokens: 10 }, { signal: controller.signal })) {
        events.push(e.type);
        if (e.type === 'retry') controller.abort();
      }

      expect(events).toEqual(['retry']);
      expect(loopback.messageRequests).toHaveLength(1);
    });

    it('should map "prompt is too long" to CONTEXT_TOO_LONG without retrying', async () => {
      const small = await AnthropicLoopback.start({ contextWindow: 5 });
      try {
        const client = new LlmClient({ apiKey: small.apiKey, baseUrl: small.url, maxRetries: 2 });
        const err = await caught(collect(client.stream({ messages: hello, maxTokens: 10 })));
        expect(err.code).toBe(ErrorCode.ContextTooLong);
        expect(small.messageRequests).toHaveLength(1);
      } finally {
        await small.close();
      }
    });
  });

  describe('countTokens', () => {
    it('should return the count from the count-tokens endpoint', async () => {
      const tokens = await llm.countTokens({ system: 'be brief', messages: hello });

      const [req] = loopback.requests;
      expect(req.path).toBe('/v1/messages/count_tokens');
      expect(req.body).toMatchObject({ model: llm.model, system: 'be brief', messages: hello });
      expect(tokens).toBe(Math.ceil(JSON.stringify(['be brief', hello, []]).length / 4));
    });
  });

  describe('measure', () => {
    it('should say it estimated when no key is set', async () => {
      const measured = await new LlmClient({}).measure({ messages: hello });

      expect(measured).toEqual({ tokens: 4 + 2, source: 'estimate' });
    });

    it('should use the model count when a key is set', async () => {
      expect((await llm.measure({ messages: hello })).source).toBe('model');
    });
  });
});

describe('model metrics', () => {
  it('should count calls and tokens by kind, cached apart from uncached', async () => {
    const { metricsRegistry } = await import('#metrics');
    const loopback = await AnthropicLoopback.start({ apiKey: 'sk-test-1' });
    try {
      const llm = new LlmClient({
        apiKey: 'sk-test-1',
        baseUrl: loopback.url,
        maxRetries: 0,
        timeoutMs: 5_000,
        model: 'metrics-test-model',
      });
      loopback.reply('Hi', {
        usage: { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 },
      });
      await llm.complete({ messages: hello, maxTokens: 100 });
      const text = await metricsRegistry.metrics();
      const value = (labels: string) =>
        Number(new RegExp(`^${labels.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
      expect(value('alfred_model_calls_total{model="metrics-test-model",outcome="ok"}')).toBe(1);
      expect(value('alfred_model_tokens_total{model="metrics-test-model",kind="input"}')).toBe(12);
      expect(value('alfred_model_tokens_total{model="metrics-test-model",kind="output"}')).toBe(3);
      expect(value('alfred_model_tokens_total{model="metrics-test-model",kind="cache_read"}')).toBe(100);
      expect(value('alfred_model_tokens_total{model="metrics-test-model",kind="cache_write"}')).toBe(7);
    } finally {
      await loopback.close();
    }
  });
});
