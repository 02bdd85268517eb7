import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SkillExecutionOutcome, SkillManifestInput } from '#contracts';
import { SkillRunner } from './skill-runner.js';
import { SANDBOX_MODE } from '#testing';
import { SANDBOX_TEST_TIMEOUT_MS, SkillWorkspace, TEST_CALLER } from './testing/skill-fixtures.js';

interface Attack {
  name: string;
  code: string;
  manifest?: Partial<SkillManifestInput>;
  outcome: SkillExecutionOutcome;
  error: RegExp;
}

const fn = (body: string) => `export async function execute(args: any, ctx: any) {\n${body}\n}`;
const HOSTILE = { timeoutMs: 1500, memoryMb: 32 };
// The permission model refuses (inner layer), or the file is not even there (the OS sandbox mounts only the skill's own
// folder).
const DENIED = /ERR_ACCESS_DENIED|Access to this API has been restricted|Cannot find module|outside the skill's folder/;

// Every attack runs in a fresh process per execution and again through the warm pool (kept-alive processes).
describe.each([{ warm: 0 }, { warm: 1 }])('SkillRunner attack suite (warm pool size $warm)', ({ warm }) => {
  let ws: SkillWorkspace;
  let runner: SkillRunner;
  let loopback: Server;
  let loopbackPort = 0;
  let loopbackHits = 0;

  beforeAll(async () => {
    ws = await SkillWorkspace.create();
    runner = new SkillRunner({
      dataRoot: ws.dataRoot,
      limits: { outputHardCapBytes: 256 * 1024 },
      warmPoolSize: warm,
      osSandbox: SANDBOX_MODE,
    });
    const victim = await ws.addSkill('victim', fn('return { success: true };'));
    await writeFile(path.join(victim.dir, 'secret.txt'), 'victim secret');
    await writeFile(path.join(victim.dir, 'secret.ts'), 'export const secret = "victim secret";');
    await mkdir(path.join(ws.tenantData('test'), 'skill-data', 'victim'), { recursive: true });
    await writeFile(path.join(ws.tenantData('test'), 'skill-data', 'victim', 'notes.txt'), 'victim data');
    loopback = createServer((_req, res) => {
      loopbackHits++;
      res.end('loopback reached');
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    loopbackPort = (loopback.address() as AddressInfo).port;
  });

  afterAll(async () => {
    runner.close();
    await new Promise((resolve) => loopback.close(resolve));
    await ws.dispose();
  });

  async function run(id: string, code: string, manifest: Partial<SkillManifestInput> = {}) {
    const skill = await ws.addSkill(id, code, manifest);
    return runner.execute(skill.dir, skill.manifest, {}, TEST_CALLER);
  }

  async function expectHealthy(): Promise<void> {
    const { result } = await run('healthy', fn('return { success: true, result: 40 + 2 };'));
    expect(result).toEqual({ success: true, result: 42 });
  }

  const attacks: Attack[] = [
    {
      name: 'read /etc/passwd through ctx',
      code: fn(`return { success: true, result: await ctx.readFile('/etc/passwd') };`),
      outcome: 'threw',
      error: /paths look like <root>\/<file>/,
    },
    {
      name: 'read /etc/passwd through a traversal',
      code: fn(`return { success: true, result: await ctx.readFile('skill/../../../../../etc/passwd') };`),
      outcome: 'threw',
      error: /paths look like <root>\/<file>/,
    },
    {
      name: 'read /etc/passwd through node:fs',
      code: fn(
        `const fs = await import('node:fs'); return { success: true, result: fs.readFileSync('/etc/passwd', 'utf8') };`,
      ),
      outcome: 'threw',
      error: /module node:fs is not available to skills/,
    },
    {
      name: 'import /etc/passwd as JSON',
      code: fn(`return { success: true, result: await import('/etc/passwd', { with: { type: 'json' } }) };`),
      outcome: 'threw',
      error: DENIED,
    },
    {
      name: "read another skill's file through ctx",
      code: fn(`return { success: true, result: await ctx.readFile('skill/../victim/secret.txt') };`),
      outcome: 'threw',
      error: /no read access to root "victim"/,
    },
    {
      name: "import another skill's module",
      code: fn(`return { success: true, result: (await import('../victim/secret.ts')).secret };`),
      outcome: 'threw',
      error: DENIED,
    },
    {
      name: "read another skill's data",
      code: fn(`return { success: true, result: await ctx.readFile('self/../../victim/notes.txt') };`),
      manifest: { permissions: { fs: { read: ['self'] } } },
      outcome: 'threw',
      error: /paths look like <root>\/<file>/,
    },
    {
      name: 'write outside its root',
      code: fn(`await ctx.writeFile('self/../../../escape.txt', 'x'); return { success: true };`),
      manifest: { permissions: { fs: { write: ['self'] } } },
      outcome: 'threw',
      error: /paths look like <root>\/<file>/,
    },
    {
      name: 'write into its own code folder',
      code: fn(`await ctx.writeFile('skill/execute.ts', 'x'); return { success: true };`),
      outcome: 'threw',
      error: /no write access to root "skill"/,
    },
    {
      name: 'write without a write permission',
      code: fn(`await ctx.writeFile('self/x.txt', 'x'); return { success: true };`),
      manifest: { permissions: { fs: { read: ['self'] } } },
      outcome: 'threw',
      error: /no write access to root "self"/,
    },
    {
      name: 'spawn a process',
      code: fn(`const cp = await import('node:child_process'); cp.execSync('id'); return { success: true };`),
      outcome: 'threw',
      error: /module node:child_process is not available to skills/,
    },
    {
      name: 'start a worker',
      code: fn(
        `const w = await import('node:worker_threads'); new w.Worker('1', { eval: true }); return { success: true };`,
      ),
      outcome: 'threw',
      error: /module node:worker_threads is not available to skills/,
    },
    {
      name: 'import node:net',
      code: fn(`const net = await import('node:net'); net.connect(80, '10.0.0.1'); return { success: true };`),
      outcome: 'threw',
      error: /module node:net is not available to skills/,
    },
    {
      name: 'import net with an upper-case scheme',
      code: fn(`await import('NODE:net'); return { success: true };`),
      outcome: 'threw',
      error: /not available to skills|No such built-in module: NODE:net/,
    },
    {
      name: 'import net from a data: URL',
      code: fn(
        `await import('data:text/javascript,import net from "node:net"; export default net;'); return { ` +
          `success: true };`,
      ),
      outcome: 'threw',
      error: /module node:net is not available to skills/,
    },
    {
      name: 'unblock net by tampering with prototypes',
      code: fn(
        `String.prototype.startsWith = () => false; Object.hasOwn = () => true; Reflect.apply = () => false; ` +
          `await import('node:http'); return { success: true };`,
      ),
      outcome: 'threw',
      error: /module node:http is not available to skills/,
    },
    {
      name: 'register its own module hooks',
      code: fn(`const m = await import('node:module'); m.registerHooks({}); return { success: true };`),
      outcome: 'threw',
      error: /module node:module is not available to skills/,
    },
    {
      name: 'use the global fetch',
      code: fn(`await fetch('http://127.0.0.1:1/'); return { success: true };`),
      outcome: 'threw',
      error: /fetch is not defined/,
    },
    {
      name: 'signal the parent process',
      code: fn(`process.kill(process.ppid, 'SIGKILL'); return { success: true };`),
      outcome: 'threw',
      error: /process.kill is not a function/,
    },
    {
      name: 'open the parent to a debugger',
      code: fn(`(process as any)._debugProcess(1); return { success: true };`),
      outcome: 'threw',
      error: /_debugProcess is not a function/,
    },
    {
      name: 'reach builtins through getBuiltinModule',
      code: fn(`(process as any).getBuiltinModule('node:net'); return { success: true };`),
      outcome: 'threw',
      error: /getBuiltinModule is not a function/,
    },
    {
      name: 'fetch the metadata address',
      code: fn(`await ctx.fetch('http://169.254.169.254/latest/meta-data/'); return { success: true };`),
      manifest: { permissions: { net: ['169.254.169.254'] } },
      outcome: 'threw',
      error: /169\.254\.169\.254 is the cloud metadata address/,
    },
    {
      name: 'fetch a host it did not declare',
      code: fn(`await ctx.fetch('https://example.com/'); return { success: true };`),
      outcome: 'threw',
      error: /host example\.com is not in the skill's allowed hosts/,
    },
    {
      name: 'fetch a private address',
      code: fn(`await ctx.fetch('http://10.0.0.1/'); return { success: true };`),
      manifest: { permissions: { net: ['10.0.0.1'] } },
      outcome: 'threw',
      error: /10\.0\.0\.1 is a private address/,
    },
    {
      name: 'fetch a file: URL',
      code: fn(`await ctx.fetch('file:///etc/passwd'); return { success: true };`),
      outcome: 'threw',
      error: /only http and https URLs are allowed/,
    },
    {
      name: 'loop forever',
      code: fn(`for (;;) {}`),
      manifest: HOSTILE,
      outcome: 'timed_out',
      error: /^timed out after 1500 ms$/,
    },
    {
      name: 'never resolve',
      code: fn(`await new Promise(() => setInterval(() => {}, 1000)); return { success: true };`),
      manifest: HOSTILE,
      outcome: 'timed_out',
      error: /^timed out after 1500 ms$/,
    },
    {
      name: 'allocate heap without bound',
      code: fn(`const keep: number[][] = []; for (;;) keep.push(new Array(100000).fill(Math.random()));`),
      manifest: { ...HOSTILE, timeoutMs: 10000 },
      outcome: 'out_of_memory',
      error: /^exceeded memory limit of 32 MB$/,
    },
    {
      name: 'allocate buffers without bound',
      code: fn(`const keep: Buffer[] = []; for (;;) keep.push(Buffer.alloc(8 * 1024 * 1024, 1));`),
      manifest: { ...HOSTILE, timeoutMs: 10000 },
      outcome: 'out_of_memory',
      error: /^exceeded memory limit of 32 MB$/,
    },
    {
      name: 'print without bound',
      code: fn(`for (;;) console.log('spam '.repeat(100));`),
      manifest: { ...HOSTILE, timeoutMs: 10000 },
      outcome: 'output_limit',
      error: /output exceeded the limit/,
    },
    {
      name: 'log without bound',
      code: fn(`for (;;) ctx.log('spam '.repeat(100));`),
      manifest: { ...HOSTILE, timeoutMs: 10000 },
      outcome: 'output_limit',
      error: /output exceeded the limit/,
    },
  ];

  it.each(attacks)(
    'should contain a skill that tries to $name',
    async ({ name, code, manifest, outcome, error }) => {
      const id = `attack-${name
        .replace(/[^a-z0-9]+/gi, '-')
        .replace(/^-|-$/g, '')
        .toLowerCase()}`
        .slice(0, 64)
        .replace(/-$/, '');
      const { result, record } = await run(id, code, manifest);
      expect(result.success).toBe(false);
      expect(result.error).toMatch(error);
      expect(record.outcome).toBe(outcome);
      await expectHealthy();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should follow no symlink out of the skill folder',
    async () => {
      const skill = await ws.addSkill(
        'symlinker',
        fn(`return { success: true, result: await ctx.readFile('skill/leak.txt') };`),
      );
      await symlink(path.join(ws.skillDir('victim'), 'secret.txt'), path.join(skill.dir, 'leak.txt'));
      const { result } = await runner.execute(skill.dir, skill.manifest, {}, TEST_CALLER);
      expect(result.success).toBe(false);
      expect(result.error).toMatch(/^skill\/leak\.txt (resolves outside its root "skill"|does not exist)$/);
      await expectHealthy();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should not import a module through a symlink out of the skill folder',
    async () => {
      const skill = await ws.addSkill(
        'symlink-importer',
        fn(`return { success: true, result: (await import('./leak.ts')).secret };`),
      );
      await symlink(path.join(ws.skillDir('victim'), 'secret.ts'), path.join(skill.dir, 'leak.ts'));
      const { result } = await runner.execute(skill.dir, skill.manifest, {}, TEST_CALLER);
      expect(result.success).toBe(false);
      expect(result.error).toMatch(DENIED);
      await expectHealthy();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    "should not show the service's environment to a skill",
    async () => {
      process.env.ALFRED_FAKE_SERVICE_SECRET = 'service-only';
      try {
        const { result } = await run(
          'env-snooper',
          fn(`return { success: true, result: { keys: Object.keys(process.env), ctx: Object.keys(ctx.env) } };`),
        );
        expect(result).toEqual({ success: true, result: { keys: [], ctx: [] } });
      } finally {
        delete process.env.ALFRED_FAKE_SERVICE_SECRET;
      }
      await expectHealthy();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should leave no raw stream or IPC handles within reach',
    async () => {
      const probe = fn(
        `return { success: true, result: [typeof (process.stdout as any)._handle, typeof (console as ` +
          `any)._stdout?._handle, typeof (process as any)._getActiveHandles, typeof (process as ` +
          `any).channel, typeof (process as any).send, typeof (process as any).binding] };`,
      );
      const { result } = await run('handle-prober', probe);
      expect(result).toEqual({
        success: true,
        result: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined'],
      });
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );

  it(
    'should refuse loopback fetches without opening a connection',
    async () => {
      const hosts = [`127.0.0.1:${loopbackPort}`, `localhost:${loopbackPort}`];
      for (const url of [`http://127.0.0.1:${loopbackPort}/`, `http://localhost:${loopbackPort}/`]) {
        const { result } = await run(
          'loopback-fetcher',
          fn(`await ctx.fetch(${JSON.stringify(url)}); return { success: true };`),
          { permissions: { net: hosts } },
        );
        expect(result.error).toMatch(/is a loopback address|resolves to (127\.0\.0\.1|::1), a loopback address/);
      }
      expect(loopbackHits).toBe(0);
      await expectHealthy();
    },
    SANDBOX_TEST_TIMEOUT_MS,
  );
});
