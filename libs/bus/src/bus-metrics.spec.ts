import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { route, ServiceName } from '#contracts';
import { AlfredError } from '#errors';
import { metricsRegistry } from '#metrics';
import { pollUntil } from '#testing';
import { z } from 'zod';
import { InProcessBus } from './in-process.bus.js';
import { queueDef } from './queue.js';

const quiet = { error: () => undefined, warn: () => undefined };

/** The value of one sample line of the registry's text output, or undefined. */
async function sample(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await metricsRegistry.metrics();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('bus metrics', () => {
  let dataDir: string;
  let bus: InProcessBus;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'alfred-bus-metrics-'));
    bus = new InProcessBus({ dataDir, logger: quiet, defaultTimeoutMs: 200 });
  });
  afterEach(async () => {
    await bus.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('should count requests per subject on both sides by outcome, and errors by code', async () => {
    const echo = route(
      ServiceName.Memory,
      `echo-${randomUUID().slice(0, 6)}`,
      z.object({ fail: z.boolean() }),
      z.object({ ok: z.boolean() }),
      { global: true },
    );
    bus.serve(echo, async ({ fail }) => {
      if (fail) throw AlfredError.notFound('thing', 'x');
      return { ok: true };
    });
    await bus.request(echo, { fail: false });
    await bus.request(echo, { fail: false });
    await expect(bus.request(echo, { fail: true })).rejects.toThrow();
    const unserved = route(ServiceName.Memory, `nobody-${randomUUID().slice(0, 6)}`, z.object({}), z.object({}), {
      global: true,
    });
    await expect(bus.request(unserved, {})).rejects.toThrow();

    expect(await sample('alfred_bus_requests_total', { subject: echo.subject, side: 'client', outcome: 'ok' })).toBe(2);
    expect(await sample('alfred_bus_requests_total', { subject: echo.subject, side: 'server', outcome: 'ok' })).toBe(2);
    expect(await sample('alfred_bus_requests_total', { subject: echo.subject, side: 'server', outcome: 'error' })).toBe(
      1,
    );
    expect(await sample('alfred_bus_errors_total', { subject: echo.subject, side: 'client', code: 'NOT_FOUND' })).toBe(
      1,
    );
    expect(
      await sample('alfred_bus_requests_total', { subject: unserved.subject, side: 'client', outcome: 'unavailable' }),
    ).toBe(1);
    expect(await sample('alfred_bus_request_duration_seconds_count', { subject: echo.subject, side: 'client' })).toBe(
      3,
    );
  });

  it('should count jobs by outcome and redeliveries, and sample the depth while consuming', async () => {
    const name = `jobs-${randomUUID().slice(0, 6)}`;
    const queue = bus.queue(
      queueDef({
        name,
        stream: name.toUpperCase(),
        subject: `alfred.test.${name}.v1`,
        payload: z.object({ n: z.number() }),
        backoffMs: [10],
      }),
    );
    for (const n of [1, 2, 3]) await queue.enqueue({ n }, { msgId: `${name}-${n}` });
    let failedOnce = false;
    const consuming = await queue.consume(async ({ n }) => {
      if (n === 1 && !failedOnce) {
        failedOnce = true;
        throw new Error('transient');
      }
    });
    await pollUntil(
      async () => (await sample('alfred_queue_jobs_total', { queue: name, outcome: 'done' })) === 3,
      5_000,
      'three jobs done',
    );
    expect(await sample('alfred_queue_jobs_total', { queue: name, outcome: 'retry' })).toBe(1);
    expect(await sample('alfred_queue_redeliveries_total', { queue: name })).toBe(1);
    expect(await sample('alfred_queue_depth', { queue: name })).toBe(0);
    await consuming.stop();
    expect(await sample('alfred_queue_depth', { queue: name })).toBeUndefined();
  });
});
