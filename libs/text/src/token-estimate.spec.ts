import { estimateTokens } from './token-estimate.js';

describe(estimateTokens.name, () => {
  it('should count about four characters per token for text', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('should add per-message overhead and count tool blocks by their JSON', () => {
    const plain = estimateTokens([{ role: 'user', content: 'abcdefgh' }]);
    const withTool = estimateTokens([
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.md b.md' }] },
    ]);

    expect(plain).toBe(4 + 2);
    const toolUseJson = JSON.stringify({ id: 't1', name: 'bash', input: { command: 'ls' } });
    expect(withTool).toBe(4 + 8 + Math.ceil(toolUseJson.length / 4) + 4 + 8 + 1 + Math.ceil('a.md b.md'.length / 4));
  });

  it('should include the system prompt and tools of a whole request', () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const bare = estimateTokens({ messages });
    const full = estimateTokens({
      messages,
      system: { stable: ['abcd'], volatile: 'efgh' },
      tools: [{ name: 'x', input_schema: { type: 'object' } }],
    });

    expect(full).toBeGreaterThan(bare + 4);
  });
});
