import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SkillRunner } from './skill-runner.js';
import { SANDBOX_MODE } from '#testing';
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

  it('should reuse a process for the next run of the same skill version, with each run its own output', async () => {
    const a = await ws.addSkill('warm-a', leaky('a'), PARAMS);
    const first = await runner.execute(a.dir, a.manifest, { n: 1 }, TEST_CALLER);
    const [idle] = runner.warmProcesses();
    const second = await runner.execute(a.dir, a.manifest, { n: 2 }, TEST_CALLER);
    expect(first.result).toEqual({ success: true, result: { seen: null } });
    // The same version may see what its previous run left: that is what reuse means.
    expect(second.result).toEqual({ success: true, result: { seen: 'left by a' } });
    expect(second.record).toMatchObject({ stdout: 'stdout of run 2\n', stderr: 'stderr of run 2\n', logs: ['log of run 2'] });
    expect(runner.warmProcesses()).toEqual([idle]);
  }, SANDBOX_TEST_TIMEOUT_MS);

  it('should never run two different skills in one process', async () => {
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
  }, SANDBOX_TEST_TIMEOUT_MS);

  it('should start a new process for a new version of the same skill', async () => {
    const c = await ws.addSkill('warm-c', leaky('c1'), PARAMS);
    await runner.execute(c.dir, c.manifest, {}, TEST_CALLER);
    await writeFile(path.join(c.dir, 'execute.ts'), leaky('c2'));
    const run = await runner.execute(c.dir, c.manifest, {}, TEST_CALLER);
    expect(run.result).toEqual({ success: true, result: { seen: null } });
  }, SANDBOX_TEST_TIMEOUT_MS);

  it('should drop a process that timed out and serve the next run from a fresh one', async () => {
    const slow = await ws.addSkill(
      'warm-slow',
      `export async function execute(args: { hang: boolean }) {
        if (args.hang) await new Promise(() => setInterval(() => {}, 1000));
        return { success: true, result: (globalThis as any).touched ?? ((globalThis as any).touched = 'fresh') };
      }`,
      { timeoutMs: 3000, parameters: { hang: { type: 'boolean', default: false } } },
    );
    await runner.execute(slow.dir, slow.manifest, {}, TEST_CALLER);
    const hung = await runner.execute(slow.dir, slow.manifest, { hang: true }, TEST_CALLER);
    expect(hung.record.outcome).toBe('timed_out');
    const after = await runner.execute(slow.dir, slow.manifest, {}, TEST_CALLER);
    expect(after.result).toEqual({ success: true, result: 'fresh' });
  }, SANDBOX_TEST_TIMEOUT_MS);
});
