import { chmod, chown, rm } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';

/** The host end of a sandbox's only way out: an HTTP proxy on a unix socket that forwards to Alfred's API alone. */
export interface ApiProxyOptions {
  readonly socketPath: string;
  /** The gateway's base URL (from configuration: its real address, in embedded and distributed mode alike). */
  readonly upstream: URL;
  /** The scoped credential every request carries; whatever the sandbox sends as a key is replaced by it. */
  readonly credential?: string;
  /** The kernel user the sandbox runs as (root services), who alone may connect. */
  readonly owner?: { uid: number; gid: number };
}

export interface ApiProxy {
  close(): Promise<void>;
}

/** Headers the sandbox may not set: its own credentials and anything about proxying or hops. */
const DROPPED = [
  'authorization',
  'x-api-key',
  'proxy-authorization',
  'proxy-connection',
  'connection',
  'keep-alive',
  'upgrade',
  'host',
  'forwarded',
  'x-forwarded-for',
];

/**
 * Starts the proxy. Requests must be origin-form (`GET /memories`); an absolute URL (a request to proxy elsewhere)
 * is refused, so the sandbox reaches exactly one place, with exactly the credential it was given.
 */
export async function startApiProxy(options: ApiProxyOptions): Promise<ApiProxy> {
  const client = options.upstream.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => forward(req, res, options, client, agent));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, resolve);
  });
  await chmod(options.socketPath, 0o600);
  if (options.owner) await chown(options.socketPath, options.owner.uid, options.owner.gid);
  return {
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      await rm(options.socketPath, { force: true });
    },
  };
}

function forward(
  req: IncomingMessage,
  res: ServerResponse,
  options: ApiProxyOptions,
  client: typeof http | typeof https,
  agent: http.Agent,
): void {
  const url = req.url ?? '';
  if (!url.startsWith('/') || url.startsWith('//')) {
    refuse(res, 400, "only requests to Alfred's API are forwarded (origin-form paths such as /memories)");
    return;
  }
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers))
    if (!DROPPED.includes(name) && value !== undefined) headers[name] = value;
  if (options.credential) headers.authorization = `Bearer ${options.credential}`;
  const base = options.upstream.pathname.replace(/\/$/, '');
  const upstream = client.request(
    {
      protocol: options.upstream.protocol,
      hostname: options.upstream.hostname,
      port: options.upstream.port,
      method: req.method,
      path: `${base}${url}`,
      headers,
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', (err) =>
    res.headersSent ? res.destroy() : refuse(res, 502, `Alfred's API did not answer: ${err.message}`),
  );
  req.pipe(upstream);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status === 400 ? 'BAD_REQUEST' : 'SERVICE_UNAVAILABLE', message } }));
}
