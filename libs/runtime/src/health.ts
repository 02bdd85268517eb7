import { createServer, type Server } from 'node:http';

/** What a service reports about itself to liveness/readiness probes and the gateway. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<boolean> | boolean;
}

export async function readiness(checks: readonly ReadinessCheck[]): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
  const results = await Promise.all(
    checks.map(async (c) => [c.name, await Promise.resolve(c.check()).catch(() => false)] as const),
  );
  return { ready: results.every(([, ok]) => ok), checks: Object.fromEntries(results) };
}

/**
 * A tiny HTTP server for container health checks: `/live` answers while the process runs,
 * `/ready` only while every readiness check passes.
 */
export async function startHealthServer(port: number, checks: readonly ReadinessCheck[]): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.url === '/live') return send(200, { live: true });
    if (req.url === '/ready') {
      void readiness(checks).then((r) => send(r.ready ? 200 : 503, r));
      return;
    }
    send(404, { error: { code: 'ROUTE_NOT_FOUND', message: `no route ${req.url}` } });
  });
  await new Promise<void>((resolve) => server.listen(port, '0.0.0.0', resolve));
  return server;
}
