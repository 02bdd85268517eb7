import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { healthRoute, MemoryRoutes, ServiceName } from '#contracts';
import { InProcessBus, NatsBus, type Bus } from '#bus';
import { createLogger } from '#logging';
import { describeWithNats, testServers } from '#testing';
import { loadGatewayConfig } from '../services/gateway/src/config.js';
import { createGatewayApp } from '../services/gateway/src/gateway.module.js';
import { client } from './harness.js';

const logger = createLogger({ service: 'e2e', level: 'silent' });
const describeNats = await describeWithNats();

/** A missing service is a clear 503 and a slow one a 504, never a hang — on both buses. */
function busFailureSuite(makeBus: (dataDir: string) => Promise<Bus>) {
  let dir: string;
  let gatewayBus: Bus;
  let serviceBus: Bus;
  let app: NestFastifyApplication;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-busfail-'));
    gatewayBus = await makeBus(dir);
    serviceBus = gatewayBus.kind === 'in-process' ? gatewayBus : await makeBus(dir);
    const env = { ALFRED_DATA_DIR: dir, ALFRED_BUS_TIMEOUT_MS: '1500' };
    app = await createGatewayApp(loadGatewayConfig(env), { bus: gatewayBus, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app.close();
    await serviceBus.close();
    if (serviceBus !== gatewayBus) await gatewayBus.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should answer 503 when no memory service is running', async () => {
    const res = await client(url).get('/memories/some-id');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.body.error.message).toMatch(/memory/);
  });

  it('should report the missing service as unhealthy', async () => {
    const res = await client(url).get('/health');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unhealthy');
    expect(res.body.services.memory).toBe('down');
  });

  it('should stay healthy when only an optional service (channels) is not deployed', async () => {
    const present = Object.values(ServiceName).filter((s) => s !== ServiceName.Gateway && s !== ServiceName.Channels);
    const served = present.map((s) =>
      serviceBus.serve(healthRoute(s), async () => ({ service: s, instance: `${s}-test`, ready: true, details: {} })),
    );
    await serviceBus.flush();
    try {
      const res = await client(url).get('/health');
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('healthy');
      expect(res.body.services.channels).toBe('absent');
      expect(res.body.services.memory).toBe('up');
    } finally {
      await Promise.all(served.map((s) => s.drain()));
    }
  });

  it('should count a service down when its health answers after ALFRED_HEALTH_TIMEOUT_MS, up within it', async () => {
    const present = Object.values(ServiceName).filter((s) => s !== ServiceName.Gateway);
    const served = present.map((s) =>
      serviceBus.serve(healthRoute(s), async () => {
        if (s === ServiceName.Memory) await new Promise((r) => setTimeout(r, 1200));
        return { service: s, instance: `${s}-test`, ready: true, details: {} };
      }),
    );
    await serviceBus.flush();
    const patient = await createGatewayApp(
      loadGatewayConfig({ ALFRED_DATA_DIR: dir, ALFRED_HEALTH_TIMEOUT_MS: '30000' }),
      { bus: gatewayBus, logger },
    );
    await patient.listen({ host: '127.0.0.1', port: 0 });
    const patientUrl = `http://127.0.0.1:${(patient.getHttpServer().address() as { port: number }).port}`;
    try {
      // The default (1 s) gives up on a 1.2 s answer; 30 s waits for it.
      const hasty = await client(url).get('/health');
      expect(hasty.status).toBe(503);
      expect(hasty.body.services.memory).toBe('down');
      const waited = await client(patientUrl).get('/health');
      expect(waited.status).toBe(200);
      expect(waited.body.services).toMatchObject({ memory: 'up', channels: 'up' });
    } finally {
      await patient.close();
      await Promise.all(served.map((s) => s.drain()));
    }
  });

  it('should say that a write answered 504 may have been applied, and how to retry it safely', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const served = serviceBus.serve(MemoryRoutes.create, async () => {
      await gate;
      throw new Error('released after the deadline');
    });
    await serviceBus.flush();
    try {
      const res = await client(url).post('/memories', { content: 'slow write' }, { 'idempotency-key': 'slow-write-1' });
      expect(res.status).toBe(504);
      expect(res.body.error).toMatchObject({ code: 'SERVICE_TIMEOUT', details: { may_have_applied: true } });
      expect(res.body.error.message).toMatch(/may have been applied; retry it with the same Idempotency-Key and body/);
    } finally {
      release();
      await served.drain();
    }
  });

  it('should answer 504 when the memory service does not reply in time', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const served = serviceBus.serve(MemoryRoutes.get, async () => {
      await gate;
      throw new Error('released after the deadline');
    });
    // The subscription travels on another connection than the gateway's: make sure the server has it.
    await serviceBus.flush();
    try {
      const started = performance.now();
      const res = await client(url).get('/memories/some-id');
      expect(res.status).toBe(504);
      expect(res.body.error.code).toBe('SERVICE_TIMEOUT');
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      release();
      await served.drain();
    }
  });
}

describe('bus failures (in-process)', () => {
  busFailureSuite(async (dir) => new InProcessBus({ dataDir: join(dir, 'bus'), defaultTimeoutMs: 1500, logger }));
});

describeNats('bus failures (NATS)', () => {
  const prefix = `busfail-${randomUUID().slice(0, 8)}.`;
  busFailureSuite(() =>
    NatsBus.connect({
      url: testServers.natsUrl,
      name: 'busfail',
      subjectPrefix: prefix,
      defaultTimeoutMs: 1500,
      logger,
    }),
  );
});
