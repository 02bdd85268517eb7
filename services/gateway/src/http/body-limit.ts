import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How much of a refused body is read and thrown away before its connection closes. */
interface DiscardLimits {
  /** Body bytes read after the answer at most (`ALFRED_BODY_DISCARD_BYTES`); a client sending more is cut off. */
  readonly bytes: number;
  /** Longest wait for the rest of the body, in all. */
  readonly totalMs: number;
  /** Longest wait without a byte from the client. */
  readonly idleMs: number;
}

/** nginx waits 30 s in all and 5 s between reads (`lingering_time`, `lingering_timeout`); so does this. */
const DISCARD_WAIT = { totalMs: 30_000, idleMs: 5_000 } as const;

/**
 * Every client gets the 413 of an oversized body, however it sends it:
 * - a request that asks `Expect: 100-continue` for a body over the limit is answered 413 at once instead of
 *   `100 Continue` (the route answers it from Content-Length alone, in the API's error shape);
 * - a connection answered before its request's body was read (the 413 of a body over the limit, sent as the limit
 *   is crossed) is closed only once the client has sent the rest of that body, or a cap is reached: closing a
 *   socket with unread data makes the kernel send a reset, which destroys the answer the client has not read yet
 *   (EPIPE in Node's fetch, a broken pipe in clients that send the whole body before reading).
 */
export function installBodyLimit(fastify: FastifyInstance, limits: { limitBytes: number; discardBytes: number }): void {
  const server = fastify.server as Server;
  refuseOversizedContinue(server, limits.limitBytes);
  const lingering = lingerBeforeClose(server, { bytes: limits.discardBytes, ...DISCARD_WAIT });
  fastify.addHook('preClose', (done) => {
    lingering.stop();
    done();
  });
}

/** Answers `Expect: 100-continue` with `100 Continue` only when the announced body is within the limit. */
function refuseOversizedContinue(server: Server, limitBytes: number): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const announced = Number(req.headers['content-length']);
    // Without a usable Content-Length (chunked) the limit is enforced while reading, as for any other request.
    if (!(announced > limitBytes)) res.writeContinue();
    server.emit('request', req, res);
  });
}

/**
 * Node closes a `Connection: close` answer's socket with `destroySoon()` as soon as the answer is written. For a
 * request whose body is still arriving, that close is replaced by a lingering one (as nginx's `lingering_close`):
 * half-close after the answer, read and discard the rest of the body within the limits, then close.
 */
function lingerBeforeClose(server: Server, limits: DiscardLimits): { stop(): void } {
  const current = new WeakMap<Socket, IncomingMessage>();
  const open = new Set<Socket>();
  let stopped = false;
  server.prependListener('request', (req: IncomingMessage) => current.set(req.socket, req));
  server.on('connection', (socket: Socket) => {
    const close = socket.destroySoon.bind(socket);
    socket.destroySoon = () => {
      const req = current.get(socket);
      if (stopped || !req || req.complete) return close();
      open.add(socket);
      socket.once('close', () => open.delete(socket));
      discardRest(socket, req, limits);
    };
  });
  return {
    stop() {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

function discardRest(socket: Socket, req: IncomingMessage, limits: DiscardLimits): void {
  // The answer is flushed before the FIN; the socket stays readable (HTTP servers allow half-open sockets).
  socket.end();
  let read = 0;
  const done = () => {
    clearTimeout(total);
    socket.destroy();
  };
  const total = setTimeout(done, limits.totalMs).unref();
  socket.setTimeout(limits.idleMs, done);
  // Counted on the socket: the request drops a refused body's bytes without emitting them. The HTTP parser still
  // reads them too, and tells when the body is complete.
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > limits.bytes) done();
  });
  req.once('end', done);
  socket.once('end', done);
}
