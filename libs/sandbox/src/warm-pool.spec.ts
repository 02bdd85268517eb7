import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SkillRunner } from './skill-runner.js';
import { pollUntil, SANDBOX_MODE } from '#testing';
import { SANDBOX_TEST_TIMEOUT_MS, SkillWorkspace, TEST_CALLER } from './testing/skill-fixtures.js';

const LEAKY = `export async function execute(args: { n: number }, ctx: { log(m: string): void }) {
  const g = globalThis as any;
  const seen = g.leak ?? null;
  g.leak = 'left by ' + SKILL;
  console.log('stdout of run ' + args.n);
  console.error('stderr of run ' + args.n);
  ctx.log('log of run ' + args.n);
  return { success: true, result: { seen } };
}`;
const leaky = (name: string) => `const SKILL = ${JSON.stringify(name)};\n${LEAKY}`;
const PARAMS = { parameters: { n: { type: 'integer' as const, default: 0 } } };

describe(`${SkillRunner.name} with a warm pool`, () => {
  let ws: SkillWorkspace;
  let runner: SkillRunner;

  beforeAll(async () => {
    ws = await SkillWorkspace.create();
    runner = new SkillRunner({ dataRoot: ws.dataRoot, warmPoolSize: 1, osSandbox: SANDBOX_MODE });
  });
  afterAll(async () => {
    runner.close();
    await ws.dispose();
  });

  it(
    'should reuse a process for the next run of the same skill version, with each run its own output',
    async () => {
      const a = await ws.addSkill('warm-a', leaky('a'), PARAMS);
      const first = await runner.execute(a.dir, a.manifest, { n: 1 }, TEST_CALLER);
      const [idle] = runner.warmProcesses();
      const second = await runner.execute(a.dir, a.manifest, { n: 2 }, TEST_CALLER);
      expect(first.result).toEqual({ success: true, result: { seen: null } });
      // The same version may see what its previous run left: that is what reuse means.
      expect(second.result).toEqual({ success: true, result: { seen: 'left by a' } });
      expect(second.record).toMatchObject({
        stdout: 'stdout of run 2\n',
        stderr: 'stderr of run 2\n',
        logs: ['log of run 2'],
      });
      expect(runner.warmProcesses()).toEqual([idle]);
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should never run two different skills in one process',
    async () => {
      const a = await ws.addSkill('warm-a', leaky('a'), PARAMS);
      const b = await ws.addSkill('warm-b', leaky('b'), PARAMS);
      await runner.execute(a.dir, a.manifest, {}, TEST_CALLER);
      const pidA = runner.warmProcesses()[0]!.pid;
      const run = await runner.execute(b.dir, b.manifest, {}, TEST_CALLER);
      expect(run.result).toEqual({ success: true, result: { seen: null } });
      const idle = runner.warmProcesses();
      expect(idle).toHaveLength(2);
      expect(new Set(idle.map((p) => p.key)).size).toBe(2);
      expect(new Set(idle.map((p) => p.pid)).size).toBe(2);
      expect(idle.find((p) => p.pid === pidA)).toBeDefined();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should start a new process for a new version of the same skill',
    async () => {
      const c = await ws.addSkill('warm-c', leaky('c1'), PARAMS);
      await runner.execute(c.dir, c.manifest, {}, TEST_CALLER);
      await writeFile(path.join(c.dir, 'execute.ts'), leaky('c2'));
      const run = await runner.execute(c.dir, c.manifest, {}, TEST_CALLER);
      expect(run.result).toEqual({ success: true, result: { seen: null } });
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should drop a process that timed out and serve the next run from a fresh one',
    async () => {
      const slow = await ws.addSkill(
        'warm-slow',
        `export async function execute(args: { hang: boolean }) {
        if (args.hang) await new Promise(() => setInterval(() => {}, 1000));
        return { success: true, result: (globalThis as any).touched ?? ((globalThis as any).touched = 'fresh') };
      }`,
        { timeoutMs: 8000, parameters: { hang: { type: 'boolean', default: false } } },
      );
      await runner.execute(slow.dir, slow.manifest, {}, TEST_CALLER);
      const hung = await runner.execute(slow.dir, slow.manifest, { hang: true }, TEST_CALLER);
      expect(hung.record.outcome).toBe('timed_out');
      const after = await runner.execute(slow.dir, slow.manifest, {}, TEST_CALLER);
      expect(after.result).toEqual({ success: true, result: 'fresh' });
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );
  describe("nothing between executions (kernel-enforced, not by the skill's good will)", () => {
    const alive = (pid: number | undefined) =>
      pid !== undefined &&
      readFile(`/proc/${pid}/stat`, 'utf8').then(
        () => true,
        () => false,
      );
    const state = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[0];
    /** SIGSTOP is delivered asynchronously; once delivered, every idle process stays stopped. */
    const frozen = (pids: ReadonlyArray<number | undefined>) =>
      pollUntil(
        async () => (await Promise.all(pids.map((pid) => state(pid!)))).every((s) => s === 'T'),
        5_000,
        'idle stops',
      );

    it(
      'should not keep a process whose run left a timer behind, so the timer never fires',
      async () => {
        // Kept warm, the process's timer would burn CPU between runs, outside every limit of a run.
        const timer = await ws.addSkill(
          'warm-timer',
          `export async function execute() {
        setTimeout(() => { const end = Date.now() + 15000; while (Date.now() < end) {} }, 50);
        return { success: true };
      }`,
        );
        const idleBefore = runner.warmProcesses().map((p) => p.pid);
        const run = await runner.execute(timer.dir, timer.manifest, {}, TEST_CALLER);
        expect(run.result).toEqual({ success: true });
        const kept = runner.warmProcesses();
        expect(kept.map((p) => p.pid)).toEqual(idleBefore);
        await frozen(kept.map((p) => p.pid));
        for (const p of kept) expect(await state(p.pid!)).toBe('T');
        // No process was kept for this skill: the idle ones are all the earlier tests' (frozen, state T).
        const fresh = await runner.execute(timer.dir, timer.manifest, {}, TEST_CALLER);
        expect(fresh.result).toEqual({ success: true });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it.each([
      ['a microtask loop', 'const spin = (): unknown => Promise.resolve().then(spin); spin();'],
      ['a nextTick loop', 'const spin = (): void => process.nextTick(spin); spin();'],
    ])(
      'should answer a skill that returned while %s keeps running, and not keep its process',
      async (_what, loop) => {
        const spinner = await ws.addSkill(
          `warm-spin-${loop.includes('nextTick') ? 'tick' : 'micro'}`,
          `export async function execute(args: { spin: boolean }) {
        if (args.spin) { ${loop} }
        return { success: true, result: 'answered' };
      }`,
          { timeoutMs: 3000, parameters: { spin: { type: 'boolean', default: false } } },
        );
        const before = new Set(runner.warmProcesses().map((p) => p.pid));
        const spun = await runner.execute(spinner.dir, spinner.manifest, { spin: true }, TEST_CALLER);
        expect(spun.result).toEqual({ success: true, result: 'answered' });
        expect(runner.warmProcesses().filter((p) => !before.has(p.pid))).toEqual([]);
        // The tenant's next run gets a process that is idle, not the spinning one (which would time out).
        const next = await runner.execute(spinner.dir, spinner.manifest, {}, TEST_CALLER);
        expect(next.record.outcome).toBe('succeeded');
        expect(runner.warmProcesses().filter((p) => !before.has(p.pid))).toHaveLength(1);
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should kill a process that would allocate after its run instead of letting it hold memory idle',
      async () => {
        const hog = await ws.addSkill(
          'warm-hog',
          `export async function execute() {
        const keep: Buffer[] = [];
        (globalThis as any).keep = keep;
        setTimeout(() => { for (let i = 0; i < 100; i++) keep.push(Buffer.alloc(8 * 1024 * 1024, 1)); }, 100);
        return { success: true };
      }`,
          { memoryMb: 64 },
        );
        const before = new Set(runner.warmProcesses().map((p) => p.pid));
        const run = await runner.execute(hog.dir, hog.manifest, {}, TEST_CALLER);
        expect(run.result).toEqual({ success: true });
        const pid = (run.record as { pid?: number }).pid;
        expect(runner.warmProcesses().filter((p) => !before.has(p.pid))).toEqual([]);
        if (pid !== undefined) await pollUntil(async () => !(await alive(pid)), 5_000, 'the hog to be killed');
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should freeze a kept process while idle and keep warm runs of two tenants apart',
      async () => {
        const shared = await ws.addSkill('warm-tenants', leaky('t'), PARAMS);
        const a = await runner.execute(shared.dir, shared.manifest, {}, { tenant: 'tenant-a', agent: 'x' });
        const b = await runner.execute(shared.dir, shared.manifest, {}, { tenant: 'tenant-b', agent: 'x' });
        // Same skill version, different tenants: separate processes, so B does not see what A left.
        expect(a.result).toEqual({ success: true, result: { seen: null } });
        expect(b.result).toEqual({ success: true, result: { seen: null } });
        const again = await runner.execute(shared.dir, shared.manifest, {}, { tenant: 'tenant-a', agent: 'x' });
        expect(again.result).toEqual({ success: true, result: { seen: 'left by t' } });
        await frozen(runner.warmProcesses().map((p) => p.pid));
        for (const p of runner.warmProcesses()) expect(await state(p.pid!)).toBe('T');
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );
  });
});
