import { randomUUID } from 'node:crypto';
import { event, route, Scope, ServiceName, topic } from '#contracts';
import { AlfredError } from '#errors';
import type { LineLogger } from '#logging';
import { PermanentError, queueDef, type Bus, type StoredEvent } from '#bus';
import { z } from 'zod';
import { gate, pollUntil } from './poll.js';

/** One bus under test, with whatever it needs cleaned up afterwards. */
export interface BusFixture {
  readonly bus: Bus;
  dispose(): Promise<void>;
}

export interface LogLine {
  readonly level: 'error' | 'warn';
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

const Echo = route(
  ServiceName.Memory,
  'contract-echo',
  z.object({ text: z.string(), count: z.number().int().min(0).max(10).default(3) }),
  z.object({ text: z.string(), count: z.number(), correlationId: z.string() }),
  { global: true },
);
/** Small limits, so the contract tests payload caps without megabytes. */
const Limited = route(
  ServiceName.Memory,
  'contract-limited',
  z.object({ text: z.string(), reply: z.int().min(0) }),
  z.object({ text: z.string() }),
  {
    global: true,
    maxRequestBytes: 200,
    maxReplyBytes: 300,
  },
);
const Nested = route(
  ServiceName.Distiller,
  'contract-nested',
  z.object({}),
  z.object({ deadline: z.number().optional(), inner: z.number().optional() }),
  { global: true },
);
const Inner = route(
  ServiceName.Learner,
  'contract-inner',
  z.object({}),
  z.object({ deadline: z.number().optional() }),
  { global: true },
);
const Nobody = route(ServiceName.Learner, 'contract-nobody', z.object({}), z.object({}), { global: true });
const Scoped = route(
  ServiceName.Memory,
  'contract-scoped',
  z.object({ scope: Scope, text: z.string() }),
  z.object({ tenant: z.string() }),
);
/** A route as it would be if it forgot its tenant: not global, and a request schema without one. */
const Forgetful = {
  ...route(ServiceName.Memory, 'contract-forgetful', z.object({ text: z.string() }), z.object({}), { global: true }),
  options: {},
};
const Thing = z.object({ id: z.string(), n: z.number().int() });
const thingCreated = event('contract-thing', 'created', 'CONTRACT_THINGS', Thing);
const thingDeleted = event('contract-thing', 'deleted', 'CONTRACT_THINGS', Thing);
const Ticks = topic(ServiceName.AgentRuntime, 'contract-ticks', z.object({ n: z.number().int() }));

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function caught(promise: Promise<unknown>): Promise<AlfredError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AlfredError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

/**
 * The bus port's behaviour, run against every adapter: the in-process bus in unit tests, NATS in
 * integration tests. `create` gets a logger that records what the adapter logs.
 */
export function busContract(create: (logger: LineLogger) => Promise<BusFixture>): void {
  let fixture: BusFixture;
  let bus: Bus;
  let logs: LogLine[];

  beforeEach(async () => {
    logs = [];
    const record = (level: LogLine['level']) => (obj: object, msg: string) =>
      logs.push({ level, obj: obj as Record<string, unknown>, msg });
    fixture = await create({ error: record('error'), warn: record('warn') });
    bus = fixture.bus;
  });
  afterEach(() => fixture.dispose());

  describe('tenancy', () => {
    it('should carry the tenant of a tenant-scoped route to its handler', async () => {
      bus.serve(Scoped, async (p) => ({ tenant: p.scope.tenant }));
      await bus.flush();
      expect(await bus.request(Scoped, { scope: { tenant: 'acme', agent: 'a' }, text: 'x' })).toEqual({
        tenant: 'acme',
      });
    });

    it('should refuse, on both sides, a request on a route that is not global and carries no tenant', async () => {
      let handled = 0;
      bus.serve(Forgetful, async () => {
        handled++;
        return {};
      });
      await bus.flush();
      expect((await caught(bus.request(Forgetful, { text: 'x' }))).message).toMatch(/must carry its tenant/);
      // A peer that skips the requesting side's check (a raw message) is refused by the serving side.
      const raw = { ...Forgetful, options: { global: true } };
      expect((await caught(bus.request(raw, { text: 'x' }))).message).toMatch(/must carry its tenant/);
      expect(handled).toBe(0);
    });
  });

  describe('request', () => {
    const echo = () =>
      bus.serve(Echo, async (p, ctx) => ({ text: p.text, count: p.count, correlationId: ctx.correlationId }));

    it('should apply request defaults and return the parsed reply', async () => {
      echo();
      await expect(bus.request(Echo, { text: 'hi' })).resolves.toMatchObject({ text: 'hi', count: 3 });
    });

    it('should carry the correlation id to the handler', async () => {
      echo();
      const reply = await bus.request(Echo, { text: 'x' }, { context: { correlationId: 'corr-42' } });
      expect(reply.correlationId).toBe('corr-42');
    });

    it('should answer an out-of-range number with VALIDATION_FAILED and the issue path', async () => {
      echo();
      const err = await caught(bus.request(Echo, { text: 'x', count: 99 }));
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.details).toEqual({ issues: [expect.objectContaining({ path: 'count' })] });
    });

    it('should answer a wrong type with BAD_REQUEST', async () => {
      echo();
      const err = await caught(bus.request(Echo, { text: 5 } as never));
      expect(err.code).toBe('BAD_REQUEST');
      expect(err.message).toContain('text');
    });

    it('should rethrow an AlfredError from the handler with its code and details', async () => {
      bus.serve(Echo, async () => {
        throw AlfredError.notFound('memory', 'm-1');
      });
      const err = await caught(bus.request(Echo, { text: 'x' }));
      expect([err.code, err.message, err.details]).toEqual(['NOT_FOUND', 'memory m-1 not found', { id: 'm-1' }]);
    });

    it('should hide an unexpected error behind INTERNAL_ERROR and log it once with the correlation id', async () => {
      bus.serve(Echo, async () => {
        throw new Error('secret database detail');
      });
      const err = await caught(bus.request(Echo, { text: 'x' }, { context: { correlationId: 'corr-err' } }));
      expect(err.code).toBe('INTERNAL_ERROR');
      expect(err.message).not.toContain('secret');
      expect(logs.filter((l) => l.level === 'error')).toEqual([
        expect.objectContaining({ obj: expect.objectContaining({ correlationId: 'corr-err' }) }),
      ]);
    });

    it('should refuse a reply that breaks the response schema with INTERNAL_ERROR', async () => {
      bus.serve(Echo, async () => ({ text: 1 }) as never);
      await expect(caught(bus.request(Echo, { text: 'x' }))).resolves.toMatchObject({ code: 'INTERNAL_ERROR' });
    });

    it('should fail with SERVICE_UNAVAILABLE when nothing serves the subject', async () => {
      const err = await caught(bus.request(Nobody, {}));
      expect(err.code).toBe('SERVICE_UNAVAILABLE');
      expect(err.message).toBe(`no learner instance is answering ${Nobody.subject}`);
    });

    it('should fail with SERVICE_TIMEOUT when the handler is slower than the timeout', async () => {
      const held = gate();
      bus.serve(Echo, async (p) => {
        await held.promise;
        return { text: p.text, count: p.count, correlationId: '' };
      });
      const err = await caught(bus.request(Echo, { text: 'x' }, { timeoutMs: 150 }));
      held.open();
      expect(err.code).toBe('SERVICE_TIMEOUT');
    });
  });

  describe('envelope', () => {
    it('should refuse a request over the route limit with PAYLOAD_TOO_LARGE before any handler sees it', async () => {
      let handled = 0;
      bus.serve(Limited, async (p) => {
        handled++;
        return { text: p.text };
      });
      await bus.flush();
      await expect(bus.request(Limited, { text: 'a'.repeat(150), reply: 0 })).resolves.toEqual({
        text: 'a'.repeat(150),
      });
      const err = await caught(bus.request(Limited, { text: 'a'.repeat(300), reply: 0 }));
      expect(err.code).toBe('PAYLOAD_TOO_LARGE');
      expect(err.status).toBe(413);
      expect(err.details).toMatchObject({ limit: 200 });
      expect(handled).toBe(1);
    });

    it('should answer a reply over the route limit with REPLY_TOO_LARGE, not a timeout', async () => {
      bus.serve(Limited, async (p) => ({ text: 'r'.repeat(p.reply) }));
      await bus.flush();
      const err = await caught(bus.request(Limited, { text: 'x', reply: 1_000 }, { timeoutMs: 30_000 }));
      expect(err.code).toBe('REPLY_TOO_LARGE');
      expect(err.message).toMatch(/limit is 300/);
    });

    it('should refuse, on both buses alike, a request over the default limit of 1 MB', async () => {
      bus.serve(Echo, async (p) => ({ text: p.text, count: p.count, correlationId: '' }));
      await bus.flush();
      const err = await caught(bus.request(Echo, { text: 'a'.repeat(1_100_000) }));
      expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('should give the handler a deadline before the caller gives up; a nested request what remains', async () => {
      bus.serve(Inner, async (_p, ctx) => ({ deadline: ctx.deadline }));
      bus.serve(Nested, async (_p, ctx) => ({
        deadline: ctx.deadline,
        inner: (await bus.request(Inner, {}, { context: ctx, timeoutMs: 60_000 })).deadline,
      }));
      await bus.flush();
      const before = Date.now();
      const reply = await bus.request(Nested, {}, { timeoutMs: 4_000 });
      expect(reply.deadline).toBeGreaterThan(before);
      expect(reply.deadline).toBeLessThanOrEqual(before + 4_000);
      // The inner hop asked for 60 s but got at most what remained of the outer deadline.
      expect(reply.inner).toBeLessThanOrEqual(reply.deadline!);
    });

    it('should not start work whose deadline has passed: SERVICE_TIMEOUT at once, the handler never runs', async () => {
      let handled = 0;
      bus.serve(Inner, async () => {
        handled++;
        return {};
      });
      await bus.flush();
      const err = await caught(
        bus.request(Inner, {}, { context: { correlationId: 'late', deadline: Date.now() - 1 } }),
      );
      expect(err.code).toBe('SERVICE_TIMEOUT');
      expect(handled).toBe(0);
    });
  });

  describe('serve', () => {
    it('should share the work among handlers of one queue group', async () => {
      const seen = new Set<string>();
      for (const who of ['a', 'b']) {
        bus.serve(Echo, async (p) => {
          seen.add(who);
          return { text: who, count: p.count, correlationId: '' };
        });
      }
      for (let i = 0; i < 40 && seen.size < 2; i++) await bus.request(Echo, { text: 'x' });
      expect([...seen].sort()).toEqual(['a', 'b']);
    });

    it('should run requests concurrently', async () => {
      const held = gate();
      let started = 0;
      bus.serve(Echo, async (p) => {
        started++;
        await held.promise;
        return { text: p.text, count: p.count, correlationId: '' };
      });
      const replies = Promise.all([bus.request(Echo, { text: '1' }), bus.request(Echo, { text: '2' })]);
      await pollUntil(() => started === 2, 3_000, 'both handlers to start');
      held.open();
      await expect(replies).resolves.toHaveLength(2);
    });

    it('should finish in-flight requests on drain and take no new ones', async () => {
      const held = gate();
      let started = false;
      const served = bus.serve(Echo, async (p) => {
        started = true;
        await held.promise;
        return { text: p.text, count: p.count, correlationId: '' };
      });
      const reply = bus.request(Echo, { text: 'in-flight' });
      await pollUntil(() => started, 3_000, 'the handler to start');
      let drained = false;
      const draining = served.drain().then(() => (drained = true));
      held.open();
      await expect(reply).resolves.toMatchObject({ text: 'in-flight' });
      await draining;
      expect(drained).toBe(true);
      await expect(caught(bus.request(Nobody, {}))).resolves.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(caught(bus.request(Echo, { text: 'late' }))).resolves.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    });
  });

  describe('emit and listen', () => {
    it('should deliver every payload, in order, to every listener of the key', async () => {
      const [a, b] = await Promise.all([bus.listen(Ticks, { key: 'k1' }), bus.listen(Ticks, { key: 'k1' })]);
      const other = await bus.listen(Ticks, { key: 'k2' });
      for (let n = 0; n < 5; n++) await bus.emit(Ticks, { n }, { key: 'k1' });
      for (const listener of [a, b]) {
        const got: number[] = [];
        for (let i = 0; i < 5; i++) got.push((await listener.next(2_000))!.n);
        expect(got).toEqual([0, 1, 2, 3, 4]);
      }
      expect(await other.next(50)).toBeUndefined();
      for (const l of [a, b, other]) l.close();
    });

    it('should end the iteration of a closed listener and deliver nothing more to it', async () => {
      const listener = await bus.listen(Ticks);
      await bus.emit(Ticks, { n: 1 });
      const seen: number[] = [];
      for await (const tick of listener) {
        seen.push(tick.n);
        listener.close();
      }
      await bus.emit(Ticks, { n: 2 });
      expect(seen).toEqual([1]);
      expect(await listener.next(50)).toBeUndefined();
    });

    it('should refuse to emit a payload that breaks the topic schema', async () => {
      await expect(caught(bus.emit(Ticks, { n: 1.5 }))).resolves.toMatchObject({ code: 'BAD_REQUEST' });
    });

    it('should refuse a key that is not one subject token', async () => {
      await expect(caught(bus.listen(Ticks, { key: 'a.b' }))).resolves.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe('subscribe', () => {
    it('should hand every published event of its kind, with its key, to every subscriber', async () => {
      const seen: Array<[string, string, number]> = [];
      const subs = await Promise.all(
        ['first', 'second'].map((name) =>
          bus.subscribe(thingCreated, (payload, key) => seen.push([name, key, payload.n])),
        ),
      );
      await bus.publish(thingCreated, { id: 'a', n: 1 }, { key: 'a', msgId: `sub-${randomUUID()}` });
      await bus.publish(thingDeleted, { id: 'a', n: 2 }, { key: 'a', msgId: `sub-${randomUUID()}` });
      await bus.publish(thingCreated, { id: 'b', n: 3 }, { key: 'b', msgId: `sub-${randomUUID()}` });
      await pollUntil(() => seen.length >= 4, 5_000, 'both subscribers to see both created events');
      expect(seen.sort()).toEqual([
        ['first', 'a', 1],
        ['first', 'b', 3],
        ['second', 'a', 1],
        ['second', 'b', 3],
      ]);
      await Promise.all(subs.map((s) => s.close()));
    });

    it('should deliver nothing after close', async () => {
      const seen: number[] = [];
      const sub = await bus.subscribe(thingCreated, (payload) => seen.push(payload.n));
      const witness: number[] = [];
      const other = await bus.subscribe(thingCreated, (payload) => witness.push(payload.n));
      await sub.close();
      await bus.publish(thingCreated, { id: 'c', n: 7 }, { key: 'c', msgId: `sub-${randomUUID()}` });
      await pollUntil(() => witness.length === 1, 5_000, 'the open subscriber to see the event');
      expect(seen).toEqual([]);
      await other.close();
    });
  });

  describe('publish', () => {
    it('should store events and read them back in order, filtered by key', async () => {
      await bus.publish(thingCreated, { id: 'a', n: 1 }, { key: 'a', msgId: 'a-1' });
      await bus.publish(thingCreated, { id: 'b', n: 1 }, { key: 'b', msgId: 'b-1' });
      await bus.publish(thingDeleted, { id: 'a', n: 2 }, { key: 'a', msgId: 'a-2' });
      const forA = await collect(bus.readEvents('CONTRACT_THINGS', 'alfred.contract-thing.*.v1.a'));
      expect(forA.map((e: StoredEvent) => [e.subject, e.payload])).toEqual([
        ['alfred.contract-thing.created.v1.a', { id: 'a', n: 1 }],
        ['alfred.contract-thing.deleted.v1.a', { id: 'a', n: 2 }],
      ]);
      expect(forA[0]!.seq).toBeLessThan(forA[1]!.seq);
      expect(Number.isNaN(Date.parse(forA[0]!.time))).toBe(false);
      await expect(collect(bus.readEvents('CONTRACT_THINGS', 'alfred.contract-thing.>'))).resolves.toHaveLength(3);
    });

    it('should store a repeated message id once', async () => {
      await bus.publish(thingCreated, { id: 'a', n: 1 }, { key: 'a', msgId: 'same' });
      await bus.publish(thingCreated, { id: 'a', n: 1 }, { key: 'a', msgId: 'same' });
      await expect(collect(bus.readEvents('CONTRACT_THINGS', '>'))).resolves.toHaveLength(1);
    });

    it('should refuse a payload that breaks the event schema', async () => {
      const err = await caught(bus.publish(thingCreated, { id: 'a', n: 1.5 }, { key: 'a', msgId: 'bad' }));
      expect(err.code).toBe('BAD_REQUEST');
      await expect(collect(bus.readEvents('CONTRACT_THINGS', '>'))).resolves.toEqual([]);
    });

    it('should read nothing from a stream that does not exist', async () => {
      await expect(collect(bus.readEvents('CONTRACT_NONE', '>'))).resolves.toEqual([]);
    });
  });

  describe('queue', () => {
    const jobs = () =>
      queueDef({
        name: `contract-jobs-${randomUUID().slice(0, 8)}`,
        stream: 'CONTRACT_JOBS',
        subject: 'alfred.jobs.contract.v1',
        payload: z.object({
          id: z.string(),
          failTimes: z.number().int().default(0),
          permanent: z.boolean().default(false),
        }),
        maxDeliver: 3,
        backoffMs: [50, 100],
        ackWaitMs: 5_000,
      });

    it('should retry a failing job with backoff until it succeeds', async () => {
      const queue = bus.queue(jobs());
      const attempts: number[] = [];
      const done: string[] = [];
      const consuming = await queue.consume(async (job, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt <= job.failTimes) throw new Error('transient');
        done.push(job.id);
      });
      await queue.enqueue({ id: 'j1', failTimes: 2 }, { msgId: 'j1' });
      await pollUntil(() => done.length === 1, 5_000, 'the job to succeed');
      await consuming.stop();
      expect(attempts).toEqual([1, 2, 3]);
    });

    it('should give up a permanently failing job at once and report it dead', async () => {
      const queue = bus.queue(jobs());
      const dead: [unknown, string][] = [];
      let attempts = 0;
      const consuming = await queue.consume(
        async () => {
          attempts++;
          throw new PermanentError('cannot ever work');
        },
        { onDead: (payload, reason) => void dead.push([payload, reason]) },
      );
      await queue.enqueue({ id: 'p1' }, { msgId: 'p1' });
      await pollUntil(() => dead.length === 1, 5_000, 'the job to be dead');
      await consuming.stop();
      expect(attempts).toBe(1);
      expect(dead[0]).toEqual([{ id: 'p1' }, expect.stringContaining('cannot ever work')]);
    });

    it('should report a job dead after max deliveries', async () => {
      const queue = bus.queue(jobs());
      const dead: string[] = [];
      let attempts = 0;
      const consuming = await queue.consume(
        async () => {
          attempts++;
          throw new AlfredError('SERVICE_UNAVAILABLE', 'still down');
        },
        { onDead: (_p, reason) => void dead.push(reason) },
      );
      await queue.enqueue({ id: 'd1' }, { msgId: 'd1' });
      await pollUntil(() => dead.length === 1, 5_000, 'the job to be dead');
      await consuming.stop();
      expect([attempts, dead[0]]).toEqual([3, expect.stringContaining('gave up after 3 attempts')]);
    });

    it('should run a job enqueued twice with one message id once', async () => {
      const queue = bus.queue(jobs());
      const done: string[] = [];
      await queue.enqueue({ id: 'x' }, { msgId: 'dup' });
      await queue.enqueue({ id: 'x' }, { msgId: 'dup' });
      await queue.enqueue({ id: 'y' }, { msgId: 'other' });
      const consuming = await queue.consume(async (job) => void done.push(job.id), { concurrency: 2 });
      await pollUntil(() => done.includes('y') && done.includes('x'), 5_000, 'both jobs');
      await consuming.stop();
      expect(done.sort()).toEqual(['x', 'y']);
    });

    it('should finish a running job within the stop deadline, and hand back one that cannot finish', async () => {
      const queue = bus.queue(jobs());
      const firstRuns: string[] = [];
      const aborted: string[] = [];
      const first = await queue.consume(
        async (job, ctx) => {
          firstRuns.push(job.id);
          if (job.id === 'quick') return;
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted.push(job.id);
          throw ctx.signal.reason; // as real handlers do when their work is aborted
        },
        { concurrency: 2 },
      );
      await queue.enqueue({ id: 'quick' }, { msgId: 'quick' });
      await queue.enqueue({ id: 'long' }, { msgId: 'long' });
      await pollUntil(() => firstRuns.length === 2, 5_000, 'both jobs to start');
      await first.stop(300);
      expect(aborted).toEqual(['long']);
      const second: Array<[string, number]> = [];
      const next = await queue.consume(async (job, ctx) => void second.push([job.id, ctx.attempt]));
      await pollUntil(() => second.length === 1, 5_000, 'the handed-back job to run again');
      await next.stop();
      // The finished job is not run again; the handed-back one is, at once (well before ackWait or any backoff).
      expect(second.map(([id]) => id)).toEqual(['long']);
      // Giving a job back is not a failure of the job: nothing logged as one.
      expect(logs.filter((l) => l.msg === 'job failed' || l.msg === 'job is dead')).toEqual([]);
    });

    it('should refuse to enqueue an invalid payload', async () => {
      const err = await caught(bus.queue(jobs()).enqueue({ id: 7 } as never, { msgId: 'bad' }));
      expect(err.code).toBe('BAD_REQUEST');
    });
  });
}
