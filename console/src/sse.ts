/** One server-sent event: its `event:` name and its parsed `data:` JSON. */
export interface SseEvent {
  readonly event: string;
  // biome-ignore lint/suspicious/noExplicitAny: the turn's event as the API sent it; each event name has its own shape
  readonly data: any;
}

/**
 * Splits an SSE byte stream into events. A turn is started with POST, which EventSource cannot send, so the
 * console reads the fetch body itself; comment lines (`: heartbeat`) are skipped.
 */
export class SseParser {
  private buffer = '';
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array | string): SseEvent[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    this.buffer = this.buffer.replace(/\r\n/g, '\n');
    const out: SseEvent[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let name = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      try {
        out.push({ event: name, data: JSON.parse(data.join('\n')) });
      } catch {
        out.push({ event: name, data: data.join('\n') });
      }
    }
    return out;
  }
}
