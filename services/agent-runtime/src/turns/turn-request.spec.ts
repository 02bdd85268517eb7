import type { SessionMessage } from '#contracts';
import { buildTurnRequest } from './turn-request.js';

const text = (role: 'user' | 'assistant', t: string): SessionMessage => ({ role, content: t });
const marked = (messages: readonly SessionMessage[]) =>
  messages.flatMap((m, i) => (typeof m.content !== 'string' && m.content.some((b) => b.cache_control) ? [i] : []));

describe(buildTurnRequest.name, () => {
  const base = {
    system: { stable: ['core'] },
    tools: [],
    material: '<turn_context>now</turn_context>',
    maxTokens: 100,
  };

  it('should put the turn material after the history and mark the history end and the tail', () => {
    const history = [text('user', 'a'), text('assistant', 'b')];
    const req = buildTurnRequest({ ...base, history, pending: [text('user', 'c')] });
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(req.messages[2]!.content).toBe(base.material);
    expect(marked(req.messages)).toEqual([1, 3]);
  });

  it("should also mark the previous call's end, at most four breakpoints with the system's", () => {
    const history = [text('user', 'a'), text('assistant', 'b')];
    const pending = [
      text('user', 'c'),
      text('assistant', 'd'),
      text('user', 'e'),
      text('assistant', 'f'),
      text('user', 'g'),
    ];
    const req = buildTurnRequest({ ...base, history, pending, previousLength: 5 });
    expect(marked(req.messages)).toEqual([1, 4, 7]);
  });

  it('should not change the messages it was given', () => {
    const pending = [text('user', 'c')];
    buildTurnRequest({ ...base, history: [], pending });
    expect(pending[0]!.content).toBe('c');
  });
});
