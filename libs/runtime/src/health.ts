import { createServer, type Server } from 'node:http';
import { clientStates, metricsRegistry } from '#metrics';

/** What a service reports about itself to liveness/readiness probes and the gateway. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<boolean> | boolean;
}

/** Ready while every Redis client of the process is connected (none: ready); a reconnecting one holds readiness. */
export const redisReadiness: ReadinessCheck = {
  name: 'redis',
  check: () => clientStates('Redis').every((c) => c.state === 'connected'),
};

export async function readiness(
  checks: readonly ReadinessCheck[],
): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
  const results = await Promise.all(
    checks.map(async (c) => [c.name, await Promise.resolve(c.check()).catch(() => false)] as const),
  );
  return { ready: results.every(([, ok]) => ok), checks: Object.fromEntries(results) };
}

export interface HealthServerOptions {
  readonly host: string;
  readonly port: number;
  readonly checks: readonly ReadinessCheck[];
}

/**
 * A tiny HTTP server for container health checks and scrapers: `/live` answers while the process runs,
 * `/ready` only while every readiness check passes, `/metrics` is the process's Prometheus registry.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const path = req.url?.split('?')[0];
    if (path === '/live') return send(200, { live: true });
    if (path === '/ready') {
      void readiness(options.checks).then((r) => send(r.ready ? 200 : 503, r));
      return;
    }
    if (path === '/metrics') {
      void metricsRegistry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metricsRegistry.contentType }).end(text),
        (err: unknown) => send(500, { error: { code: 'INTERNAL', message: `metrics failed: ${String(err)}` } }),
      );
      return;
    }
    send(404, { error: { code: 'ROUTE_NOT_FOUND', message: `no route ${path}` } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  return server;
}
