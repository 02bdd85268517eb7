import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ExecutableSkillRoutes, SkillRoutes } from '#contracts';
import { InProcessBus, type Served } from '#bus';
import { createLogger } from '#logging';
import { SkillRunner, skillDigest } from '#sandbox';
import { FairSlots } from '#runtime';
import { gate, SANDBOX_MODE } from '#testing';
import {
  SANDBOX_TEST_TIMEOUT_MS,
  SkillWorkspace,
  TEST_CALLER,
} from '../../../libs/sandbox/src/testing/skill-fixtures.js';
import { ExecutionLog } from './execution-log.js';
import { SkillExecutionService } from './skill-execution.service.js';
import { SkillFilesCache } from './skill-files.cache.js';

describe(SkillExecutionService.name, () => {
  let ws: SkillWorkspace;
  let bus: InProcessBus;
  let runner: SkillRunner;
  const served: Served[] = [];

  beforeAll(async () => {
    ws = await SkillWorkspace.create();
    bus = new InProcessBus({
      dataDir: path.join(ws.root, 'bus'),
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    runner = new SkillRunner({ dataRoot: ws.dataRoot, osSandbox: SANDBOX_MODE });
  });
  afterAll(async () => {
    await Promise.all(served.map((s) => s.drain()));
    await runner.close();
    await bus.close();
    await ws.dispose();
  });

  /** Caches `dir` as the runner would after a first run, and lets the registry's side of the bus resolve it. */
  const digests = new Map<string, string>();
  let counting = gate();
  const counts: Array<{ id: string; success: boolean }> = [];
  const cacheDir = () => path.join(ws.root, 'cache');
  async function cached(
    id: string,
    code: string,
    manifest: Parameters<SkillWorkspace['addSkill']>[2] = {},
  ): Promise<void> {
    const { dir } = await ws.addSkill(id, code, manifest);
    const digest = await skillDigest(dir);
    await mkdir(cacheDir(), { recursive: true });
    await cp(dir, path.join(cacheDir(), digest.replace(/^sha256:/, '')), { recursive: true });
    digests.set(id, digest);
    if (served.length > 0) return;
    served.push(
      bus.serve(ExecutableSkillRoutes.resolve, async ({ id: asked }) => ({
        id: asked,
        status: 'loaded' as const,
        digest: digests.get(asked)!,
      })),
      bus.serve(SkillRoutes.executed, async ({ id: done, success }) => {
        await counting.promise;
        counts.push({ id: done, success });
        return { counted: [done], outcomes: { success: 1, failure: 0, estimate: 0.6 } };
      }),
    );
  }
  const serviceWith = (slots: FairSlots) =>
    new SkillExecutionService(
      bus,
      new SkillFilesCache(bus, cacheDir()),
      runner,
      new ExecutionLog(bus),
      'runner-1',
      slots,
    );

  it(
    'should answer without waiting for the outcome to be counted, and wait for it when the service stops',
    async () => {
      await cached(
        'doubler',
        'export async function execute(args: { n: number }) { return { success: true, result: args.n * 2 }; }',
        {
          parameters: { n: { type: 'number', required: true } },
        },
      );
      const service = serviceWith(new FairSlots(1));

      const answer = await service.execute(
        { id: 'doubler', args: { n: 21 }, caller: TEST_CALLER },
        { correlationId: 'c-1' },
      );
      expect(answer).toMatchObject({ success: true, result: 42, outcome: 'succeeded' });
      expect(counts).toEqual([]);

      let stopped = false;
      const stopping = service.onApplicationShutdown().then(() => (stopped = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(stopped).toBe(false);
      counting.open();
      await stopping;
      expect(counts).toEqual([{ id: 'doubler', success: true }]);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    "should run another tenant's execution while one tenant holds its share of the slots",
    async () => {
      counting = gate();
      counting.open();
      await cached(
        'napper',
        'export async function execute() { await new Promise((r) => setTimeout(r, 6000)); return { success: true }; }',
        {
          timeoutMs: 10_000,
        },
      );
      await cached('quick', 'export async function execute() { return { success: true }; }');
      const service = serviceWith(new FairSlots(2, 1));
      const finished: string[] = [];
      const run = (id: string, tenant: string, name: string) =>
        service.execute({ id, args: {}, caller: { tenant, agent: 'x' } }, { correlationId: name }).then((answer) => {
          finished.push(name);
          return answer;
        });
      // Tenant a asks first, twice: its second run waits for its first (its share is one slot); b's takes the other.
      const all = [run('napper', 'a', 'a1'), run('napper', 'a', 'a2'), run('quick', 'b', 'b1')];
      for (const answer of await Promise.all(all)) expect(answer.outcome).toBe('succeeded');
      expect(finished).toEqual(['b1', 'a1', 'a2']);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );
});
