import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ExecutableSkillRoutes, SkillRoutes } from '#contracts';
import { InProcessBus, type Served } from '#bus';
import { createLogger } from '#logging';
import { SkillRunner, skillDigest } from '#sandbox';
import { gate, pollUntil, SANDBOX_MODE } from '#testing';
import { SANDBOX_TEST_TIMEOUT_MS, SkillWorkspace, TEST_CALLER } from '../../../libs/sandbox/src/testing/skill-fixtures.js';
import { ExecutionLog } from './execution-log.js';
import { SkillExecutionService, Slots } from './skill-execution.service.js';
import { SkillFilesCache } from './skill-files.cache.js';

describe(Slots.name, () => {
  describe('run', () => {
    it('should run at most its size at once and start waiting work in arrival order', async () => {
      const slots = new Slots(2);
      const gates = [gate(), gate(), gate()];
      const started: number[] = [];
      const runs = gates.map((g, i) => slots.run(async () => { started.push(i); await g.promise; return i; }));
      await pollUntil(() => started.length === 2, 1000, 'two started');
      expect(started).toEqual([0, 1]);
      gates[1]!.open();
      await pollUntil(() => started.length === 3, 1000, 'the third started');
      gates[0]!.open();
      gates[2]!.open();
      expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    });

    it('should free its slot when the work fails', async () => {
      const slots = new Slots(1);
      await expect(slots.run(async () => { throw new Error('boom'); })).rejects.toThrow('boom');
      expect(await slots.run(async () => 'next')).toBe('next');
    });
  });
});

describe(SkillExecutionService.name, () => {
  let ws: SkillWorkspace;
  let bus: InProcessBus;
  let runner: SkillRunner;
  const served: Served[] = [];

  beforeAll(async () => {
    ws = await SkillWorkspace.create();
    bus = new InProcessBus({ dataDir: path.join(ws.root, 'bus'), logger: createLogger({ service: 'test', level: 'silent' }) });
    runner = new SkillRunner({ dataRoot: ws.dataRoot, osSandbox: SANDBOX_MODE });
  });
  afterAll(async () => {
    await Promise.all(served.map((s) => s.drain()));
    await runner.close();
    await bus.close();
    await ws.dispose();
  });

  it('should answer without waiting for the outcome to be counted, and wait for it when the service stops', async () => {
    const { dir } = await ws.addSkill('doubler', 'export async function execute(args: { n: number }) { return { success: true, result: args.n * 2 }; }', {
      parameters: { n: { type: 'number', required: true } },
    });
    const digest = await skillDigest(dir);
    // The runner's cache already holds this version (as after a first run): no files need fetching.
    const cacheDir = path.join(ws.root, 'cache');
    await mkdir(cacheDir, { recursive: true });
    await cp(dir, path.join(cacheDir, digest.replace(/^sha256:/, '')), { recursive: true });
    // The registry's side of the bus: the current version, and a count that waits until the test lets it finish.
    const counting = gate();
    const counts: Array<{ id: string; success: boolean }> = [];
    served.push(
      bus.serve(ExecutableSkillRoutes.resolve, async ({ id }) => ({ id, status: 'loaded' as const, digest })),
      bus.serve(SkillRoutes.executed, async ({ id, success }) => {
        await counting.promise;
        counts.push({ id, success });
        return { counted: [id], outcomes: { success: 1, failure: 0, estimate: 0.6 } };
      }),
    );
    const service = new SkillExecutionService(bus, new SkillFilesCache(bus, cacheDir), runner, new ExecutionLog(bus), 'runner-1', new Slots(1));

    const answer = await service.execute({ id: 'doubler', args: { n: 21 }, caller: TEST_CALLER }, { correlationId: 'c-1' });
    expect(answer).toMatchObject({ success: true, result: 42, outcome: 'succeeded' });
    expect(counts).toEqual([]);

    let stopped = false;
    const stopping = service.onApplicationShutdown().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    counting.open();
    await stopping;
    expect(counts).toEqual([{ id: 'doubler', success: true }]);
  }, SANDBOX_TEST_TIMEOUT_MS);
});
