import { createLogger } from '#logging';
import { InProcessBus } from '#bus';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { API_ENDPOINTS } from '../services/gateway/src/api-info.js';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createGatewayApp, registeredRoutes } from '../services/gateway/src/gateway.module.js';

/** `GET /` is documentation users rely on: it must list exactly the routes the gateway serves. */
describe('the endpoint list of GET /', () => {
  let dir: string;
  let bus: InProcessBus;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-apiinfo-'));
    bus = new InProcessBus({ dataDir: dir });
    app = await createGatewayApp(loadGatewayConfig({ ALFRED_DATA_DIR: dir }), {
      bus,
      logger: createLogger({ service: 'e2e', level: 'silent' }),
    });
  });
  afterAll(async () => {
    await app.close();
    await bus.close();
    await rm(dir, { recursive: true, force: true });
  });

  // `{id}` in the list is `:id` in fastify; the resource path is a wildcard. Aliases and probes are listed under their
  // main path.
  const toPattern = (path: string) => path.replace(/\{path\}$/, '*').replace(/\{(\w+)\}/g, ':$1');
  const key = (method: string, url: string) => `${method} ${url.replace(/:\w+/g, ':p')}`;
  const unlisted = new Set([
    'GET /',
    'GET /health/live',
    'GET /health/ready',
    'POST /skills/:p/execute',
    'GET /skills/:p/executions',
  ]);
  // The MCP controller takes every method on /mcp and lets the MCP transport answer (POST is the protocol).
  const isMcp = (k: string) => k.endsWith(' /mcp');

  it('should list every served route', () => {
    const listed = new Set(API_ENDPOINTS.flatMap((e) => e.methods.map((m) => key(m, toPattern(e.path)))));
    const missing = registeredRoutes(app)
      .map((r) => key(r.method, r.url))
      .filter((k) => !listed.has(k) && !unlisted.has(k) && !isMcp(k));
    expect(missing).toEqual([]);
  });

  it('should list no route that is not served', () => {
    const served = new Set(registeredRoutes(app).map((r) => key(r.method, r.url)));
    const phantom = API_ENDPOINTS.flatMap((e) => e.methods.map((m) => key(m, toPattern(e.path)))).filter(
      (k) => !served.has(k),
    );
    expect(phantom).toEqual([]);
  });
});
