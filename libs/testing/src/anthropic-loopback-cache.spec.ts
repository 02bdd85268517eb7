import { LoopbackPromptCache } from './anthropic-loopback-cache.js';

const big = (tag: string) => `${tag} ${'x'.repeat(8_000)}`;
const marked = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });

describe(LoopbackPromptCache.name, () => {
  it('should write at breakpoints and read the longest cached prefix on the next request', () => {
    const cache = new LoopbackPromptCache(1024);
    const system = [marked(big('system'))];
    const first = { system, messages: [{ role: 'user', content: [marked(big('one'))] }] };
    const u1 = cache.usage(first);
    expect(u1.cache_read_input_tokens).toBe(0);
    expect(u1.cache_creation_input_tokens).toBeGreaterThan(4_000);

    const second = {
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: big('one') }] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [marked('two')] },
      ],
    };
    const u2 = cache.usage(second);
    expect(u2.cache_read_input_tokens).toBe(u1.cache_creation_input_tokens);
    expect(u2.input_tokens).toBe(0);
  });

  it('should cache nothing without breakpoints or below the minimum, and miss on a changed prefix', () => {
    const cache = new LoopbackPromptCache(1024);
    expect(cache.usage({ system: 'plain', messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(cache.usage({ system: [marked('short')], messages: [] })).toMatchObject({
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    cache.usage({ system: [marked(big('a'))], messages: [] });
    expect(cache.usage({ system: [marked(big('b'))], messages: [] }).cache_read_input_tokens).toBe(0);
  });
});
