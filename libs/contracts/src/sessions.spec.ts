import { AgentFileKind, AgentFileRestoreBody } from './agent-files.js';
import { SessionAppendBody, SessionCreateBody } from './sessions.js';

describe('SessionAppendBody', () => {
  it('should accept text, tool_use and tool_result messages in the Anthropic shape', () => {
    const body = {
      messages: [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'bash', input: { command: 'ls' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'a.md' }], is_error: false },
          ],
        },
      ],
    };

    expect(SessionAppendBody.parse(body)).toEqual(body);
  });

  it.each([
    ['an empty list', { messages: [] }],
    ['a system role', { messages: [{ role: 'system', content: 'x' }] }],
    ['an unknown block type', { messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }],
    ['an unknown field', { messages: [{ role: 'user', content: 'x', name: 'bob' }] }],
    ['an empty block list', { messages: [{ role: 'user', content: [] }] }],
    [
      'a tool_use from the user',
      { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] },
    ],
    [
      'a tool_result from the assistant',
      { messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }] },
    ],
    [
      'a tool_use without input',
      { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n' }] }] },
    ],
  ])('should refuse %s', (_, body) => {
    expect(SessionAppendBody.safeParse(body).success).toBe(false);
  });
});

describe('SessionCreateBody', () => {
  it('should accept an optional agent and metadata, and refuse a bad agent name', () => {
    expect(SessionCreateBody.parse({})).toEqual({});
    expect(SessionCreateBody.parse({ agent: 'coder', metadata: { a: 1 } })).toEqual({
      agent: 'coder',
      metadata: { a: 1 },
    });
    expect(SessionCreateBody.safeParse({ agent: 'Bad Name' }).success).toBe(false);
  });
});

describe('AgentFileRestoreBody', () => {
  it('should take a positive integer version and a known file kind', () => {
    expect(AgentFileRestoreBody.parse({ version: 2 })).toEqual({ version: 2 });
    expect(AgentFileRestoreBody.safeParse({ version: 0 }).success).toBe(false);
    expect(AgentFileRestoreBody.safeParse({ version: '2' }).success).toBe(false);
    expect(AgentFileKind.safeParse('notes').success).toBe(false);
  });
});
