import { SseParser } from './sse';

describe(SseParser.name, () => {
  describe('push', () => {
    it('should split events across chunk boundaries and skip heartbeat comments', () => {
      const p = new SseParser();
      expect(p.push('event: text_delta\ndata: {"type":"text_delta","te')).toEqual([]);
      expect(p.push('xt":"Hi"}\n\n: heartbeat\n\nevent: done\ndata: {"status":"completed"}\n\n')).toEqual([
        { event: 'text_delta', data: { type: 'text_delta', text: 'Hi' } },
        { event: 'done', data: { status: 'completed' } },
      ]);
    });

    it('should decode UTF-8 split inside a character and accept CRLF line ends', () => {
      const p = new SseParser();
      const bytes = new TextEncoder().encode('event: message\r\ndata: {"text":"café"}\r\n\r\n');
      const cut = bytes.length - 8;
      expect([...p.push(bytes.slice(0, cut)), ...p.push(bytes.slice(cut))]).toEqual([
        { event: 'message', data: { text: 'café' } },
      ]);
    });
  });
});
