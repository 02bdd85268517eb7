import { connect, type Socket } from 'node:net';
import { createAgents, client, startSystem, type TestSystem } from './harness.js';

const LIMIT = 1024 * 1024;
const DISCARD = 16 * 1024 * 1024;
/** A memory far over the limit, as the clients sent it. */
const BIG = Buffer.from(JSON.stringify({ content: 'a'.repeat(12 * 1024 * 1024) }));
const AGENT = 'oversized';

/** What a raw HTTP/1.1 client saw: everything it read, and how the connection ended. */
interface RawResult {
  readonly text: string;
  /** `end` for a clean close (FIN), else the socket error's code (a reset: ECONNRESET, EPIPE). */
  readonly ending: string;
}

function collect(socket: Socket): Promise<RawResult> {
  let text = '';
  return new Promise((resolve) => {
    let errorCode: string | undefined;
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (errorCode ??= err.code ?? err.message));
    socket.on('close', () => resolve({ text, ending: errorCode ?? 'end' }));
  });
}

const write = (socket: Socket, data: Buffer | string) =>
  new Promise<void>((resolve) => socket.write(data, () => resolve()));

/**
 * Sends the request head and its whole body before reading anything, as Python's http.client and many simple
 * clients do: the socket is paused, so an answer stays in the kernel's buffer, where a reset would destroy it.
 */
async function sendAllThenRead(port: number, head: string, body: readonly Buffer[]): Promise<RawResult> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.pause();
  const result = collect(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  for (const part of [Buffer.from(head), ...body]) await write(socket, part);
  socket.resume();
  return result;
}

/** The status of each answer in a raw exchange, in order (a `100 Continue` counts). */
const statuses = (text: string) => [...text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
const bodyOf = (text: string) =>
  JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4)) as { error: { code: string } };

const chunked = (data: Buffer, size: number): Buffer[] => {
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) {
    const slice = data.subarray(i, i + size);
    parts.push(Buffer.concat([Buffer.from(`${slice.length.toString(16)}\r\n`), slice, Buffer.from('\r\n')]));
  }
  return [...parts, Buffer.from('0\r\n\r\n')];
};

/** Every client gets the 413 of a body far over ALFRED_BODY_LIMIT_BYTES in the API's error shape, never a reset. */
describe('bodies over the limit', () => {
  let system: TestSystem;
  let port: number;
  const head = (extra: string) =>
    `POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Alfred-Agent: ` +
    `${AGENT}\r\n${extra}\r\n`;
  beforeAll(async () => {
    system = await startSystem('embedded', {
      ALFRED_BODY_LIMIT_BYTES: String(LIMIT),
      ALFRED_BODY_DISCARD_BYTES: String(DISCARD),
    });
    port = Number(new URL(system.url).port);
    await createAgents(system.url, [AGENT]);
  }, 60_000);
  afterAll(async () => {
    // Nothing of any refused body was stored.
    if (system)
      expect((await client(system.url).get('/memories', { 'x-alfred-agent': AGENT })).body.pagination.total).toBe(0);
    await system?.stop();
  });

  it("should answer Node's fetch (undici) with the 413, every time", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${system.url}/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-alfred-agent': AGENT },
        body: BIG,
      });
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('should answer a chunked upload without Content-Length through fetch with the 413', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < BIG.length; i += 64 * 1024) controller.enqueue(BIG.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-alfred-agent': AGENT },
      body,
      duplex: 'half',
    };
    const res = await fetch(`${system.url}/memories`, init as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('should answer a client that sends the whole body before reading, with and without Content-Length', async () => {
    const sized = await sendAllThenRead(port, head(`Content-Length: ${BIG.length}\r\n`), [BIG]);
    expect({ statuses: statuses(sized.text), ending: sized.ending }).toEqual({ statuses: [413], ending: 'end' });
    expect(bodyOf(sized.text).error.code).toBe('PAYLOAD_TOO_LARGE');
    const streamed = await sendAllThenRead(port, head('Transfer-Encoding: chunked\r\n'), chunked(BIG, 256 * 1024));
    expect({ statuses: statuses(streamed.text), ending: streamed.ending }).toEqual({ statuses: [413], ending: 'end' });
    expect(bodyOf(streamed.text).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('should refuse `Expect: 100-continue` over the limit with 413, not 100, even if the body follows', async () => {
    const socket = connect({ host: '127.0.0.1', port });
    const result = collect(socket);
    socket.write(head(`Content-Length: ${BIG.length}\r\nExpect: 100-continue\r\n`));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    // A client may send the body all the same (RFC 9110 10.1.1): it is read and discarded, and the close is clean.
    await write(socket, BIG);
    const { text, ending } = await result;
    expect({ statuses: statuses(text), ending }).toEqual({ statuses: [413], ending: 'end' });
    expect(bodyOf(text).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('should still answer `100 Continue` to a body within the limit', async () => {
    const body = Buffer.from(JSON.stringify({ content: 'within the limit' }));
    const socket = connect({ host: '127.0.0.1', port });
    const result = collect(socket);
    socket.write(head(`Content-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n`));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write(body);
    const { text } = await result;
    expect(statuses(text)).toEqual([100, 201]);
    await client(system.url).delete(
      `/memories/${JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4)).id}`,
      undefined,
      { 'x-alfred-agent': AGENT },
    );
  });

  it('should stop reading a body past ALFRED_BODY_DISCARD_BYTES and close the connection', async () => {
    const huge = Buffer.alloc(DISCARD + 8 * 1024 * 1024, 0x61);
    const socket = connect({ host: '127.0.0.1', port });
    const result = collect(socket);
    socket.write(head(`Content-Length: ${huge.length}\r\n`));
    socket.write(huge);
    const { text, ending } = await result;
    // The 413 arrived long before the cap; then the server closed with the rest unread, which resets the connection.
    expect(statuses(text)).toEqual([413]);
    expect(['ECONNRESET', 'EPIPE']).toContain(ending);
  });
});
