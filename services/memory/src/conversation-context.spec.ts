import { conversationContexts, messageContent } from './conversation-context.js';

describe('conversation context', () => {
  const at = (minutes: number) => new Date(Date.UTC(2023, 4, 8, 13, 0) + minutes * 60_000).toISOString();
  const m = (speaker: string, content: string, time?: string) => ({ speaker, content, ...(time ? { time } : {}) });

  describe(messageContent.name, () => {
    it('should say who spoke', () => {
      expect(messageContent(m('Caroline', 'Hi!'))).toBe('Caroline: Hi!');
    });
  });

  describe(conversationContexts.name, () => {
    it('should give each message its date and the two messages on each side', () => {
      const messages = ['a', 'b', 'c', 'd', 'e', 'f'].map((x, i) => m('S', x, at(i)));
      const contexts = conversationContexts(messages);
      expect(contexts[0]).toBe('Monday, 8 May 2023\nS: b\nS: c');
      expect(contexts[3]).toBe('Monday, 8 May 2023\nS: b\nS: c\nS: e\nS: f');
    });

    it('should not reach across a gap of more than half an hour (another sitting)', () => {
      const contexts = conversationContexts([
        m('A', 'one', at(0)),
        m('B', 'two', at(1)),
        m('A', 'three', at(600)),
        m('B', 'four', at(601)),
      ]);
      expect(contexts[1]).toBe('Monday, 8 May 2023\nA: one');
      expect(contexts[2]).toBe('Monday, 8 May 2023\nB: four');
    });

    it('should keep neighbours without times together and add no date', () => {
      expect(conversationContexts([m('A', 'x'), m('B', 'y')])).toEqual(['B: y', 'A: x']);
    });
  });
});
