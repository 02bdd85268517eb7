import { Metrics } from '#metrics';
import type { FastifyInstance } from 'fastify';

/** Counts and times every answered request by its route pattern (`/memories/:id`, never the id itself). */
export function installHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    Metrics.httpRequests.inc({ method: req.method, route, status: String(reply.statusCode) });
    Metrics.httpDuration.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
}
