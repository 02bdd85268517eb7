import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { SkillRunner } from './skill-runner.js';
import { SANDBOX_MODE } from '#testing';
import { SANDBOX_TEST_TIMEOUT_MS, SkillWorkspace, TEST_CALLER } from './testing/skill-fixtures.js';

describe(SkillRunner.name, () => {
  let ws: SkillWorkspace;
  let runner: SkillRunner;

  beforeAll(async () => {
    ws = await SkillWorkspace.create();
    runner = new SkillRunner({
      dataRoot: ws.dataRoot,
      secrets: { WEATHER_KEY: 'k-123', SERVICE_TOKEN: 'never-for-skills', OTHER_TENANT_KEY: 'not-for-test' },
      secretGrants: { WEATHER_KEY: [TEST_CALLER.tenant], OTHER_TENANT_KEY: ['someone-else'] },
      osSandbox: SANDBOX_MODE,
    });
  });
  afterAll(() => ws.dispose());

  describe('execute', () => {
    it(
      'should run a skill with defaults applied and record the execution',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'greet',
          `export async function execute(args: { name: string; times: number }, ctx: { log(m: string): void }) {
          console.log('printing to stdout');
          ctx.log('greeting ' + args.name);
          return { success: true, result: { text: ('hello ' + args.name + ' ').repeat(args.times).trim() } };
        }`,
          {
            parameters: {
              name: { type: 'string', default: 'world' },
              times: { type: 'integer', minimum: 1, maximum: 3, default: 2 },
            },
          },
        );
        const { result, record } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({ success: true, result: { text: 'hello world hello world' } });
        expect(record).toMatchObject({
          skillId: 'greet',
          version: '1.0.0',
          outcome: 'succeeded',
          caller: TEST_CALLER,
          logs: ['greeting world'],
        });
        expect(record.stdout).toBe('printing to stdout\n');
        expect(record.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );
    it(
      'should give a skill only the secrets its manifest names and the operator granted to its tenant',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'env-reader',
          `export async function execute(args: unknown, ctx: { env: Record<string, string> }) {
          return { success: true, result: { ctx: ctx.env, proc: { ...process.env } } };
        }`,
          { permissions: { env: ['WEATHER_KEY', 'NOT_CONFIGURED', 'OTHER_TENANT_KEY', 'SERVICE_TOKEN'] } },
        );
        const { result } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({
          success: true,
          result: { ctx: { WEATHER_KEY: 'k-123' }, proc: { WEATHER_KEY: 'k-123' } },
        });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should read and write files inside the allowed roots',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'notes',
          `export async function execute(args: { text: string }, ctx: any) {
          await ctx.writeFile('self/sub/note.txt', args.text);
          await ctx.writeFile('shared/reports/latest.md', '# ' + args.text);
          const template = await ctx.readFile('skill/template.txt');
          return { success: true, result: template + ':' + (await ctx.readFile('self/sub/note.txt')) };
        }`,
          {
            parameters: { text: { type: 'string', required: true } },
            permissions: { fs: { write: ['self', 'shared/reports'] } },
          },
        );
        await import('node:fs/promises').then((fs) => fs.writeFile(path.join(dir, 'template.txt'), 'tpl'));
        const { result } = await runner.execute(dir, manifest, { text: 'remember' }, TEST_CALLER);
        expect(result).toEqual({ success: true, result: 'tpl:remember' });
        expect(await readFile(path.join(ws.tenantData('test'), 'skill-data', 'notes', 'sub', 'note.txt'), 'utf8')).toBe(
          'remember',
        );
        expect(await readFile(path.join(ws.tenantData('test'), 'shared', 'reports', 'latest.md'), 'utf8')).toBe(
          '# remember',
        );
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should show the skill fixed paths only: its errors and stack name no host folder',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'where-am-i',
          `export async function execute(args: unknown, ctx: any) {
          await ctx.writeFile('self/x.txt', 'x');
          if (args && (args as any).fail)
            throw new Error('failed at ' + import.meta.url + ' ' + new Error('here').stack);
          return { success: true, result: { url: import.meta.url, cwd: process.cwd() } };
        }`,
          { parameters: { fail: { type: 'boolean' } }, permissions: { fs: { write: ['self'] } } },
        );
        const ok = await runner.execute(dir, manifest, {}, TEST_CALLER);
        const failed = await runner.execute(dir, manifest, { fail: true }, TEST_CALLER);
        for (const text of [JSON.stringify(ok.result), JSON.stringify(failed.result), failed.record.stderr]) {
          expect(text).not.toContain(ws.root);
          expect(text).not.toContain(process.cwd());
        }
        if (SANDBOX_MODE === 'required') {
          expect(ok.result).toEqual({ success: true, result: { url: 'file:///skill/execute.ts', cwd: '/' } });
          expect(failed.result.error).toContain('file:///skill/execute.ts');
        }
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      "should refuse a skill's writes past its tenant's data quota, keep what is stored, and allow shrinking",
      async () => {
        const MiB = 1024 * 1024;
        const quoted = new SkillRunner({
          dataRoot: ws.dataRoot,
          osSandbox: SANDBOX_MODE,
          tenantDataQuotaBytes: 3 * MiB,
          warmPoolSize: 1,
        });
        try {
          const { dir, manifest } = await ws.addSkill(
            'filler',
            `export async function execute(args: { name: string; mb: number }, ctx: any) {
            try {
              await ctx.writeFile('self/' + args.name, new Uint8Array(args.mb * 1024 * 1024));
              return { success: true, result: 'wrote' };
            } catch (err) { return { success: false, error: (err as Error).message }; }
          }`,
            {
              parameters: { name: { type: 'string', required: true }, mb: { type: 'number', required: true } },
              permissions: { fs: { write: ['self'] } },
            },
          );
          const caller = { tenant: 'quota-tenant', agent: 'x' };
          expect((await quoted.execute(dir, manifest, { name: 'a.bin', mb: 2 }, caller)).result).toEqual({
            success: true,
            result: 'wrote',
          });
          const refused = await quoted.execute(dir, manifest, { name: 'b.bin', mb: 2 }, caller);
          expect(refused.result).toEqual({
            success: false,
            error: expect.stringMatching(
              /write refused: it adds 2097152 bytes past the disk quota: this tenant's skill data use .* of 3\.00 MiB/,
            ),
          });
          const data = path.join(ws.tenantData('quota-tenant'), 'skill-data', 'filler');
          await expect(access(path.join(data, 'b.bin'))).rejects.toThrow();
          expect((await readFile(path.join(data, 'a.bin'))).length).toBe(2 * MiB);
          // Rewriting a file smaller always passes; another tenant has its own quota.
          expect((await quoted.execute(dir, manifest, { name: 'a.bin', mb: 1 }, caller)).result).toEqual({
            success: true,
            result: 'wrote',
          });
          expect(
            (await quoted.execute(dir, manifest, { name: 'b.bin', mb: 2 }, { tenant: 'other-tenant', agent: 'x' }))
              .result,
          ).toEqual({ success: true, result: 'wrote' });
          expect((await quoted.dataUsage('quota-tenant'))!.tenant.used).toBeLessThan(2 * MiB);
        } finally {
          quoted.close();
        }
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should refuse invalid arguments with field details before anything runs',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'strict-args',
          `export async function execute(args: unknown, ctx: any) { await ctx.writeFile('self/ran.txt', ` +
            `'ran'); return { success: true }; }`,
          {
            parameters: {
              size: { type: 'string', enum: ['small', 'large'], required: true },
              count: { type: 'integer', maximum: 5 },
            },
            permissions: { fs: { write: ['self'] } },
          },
        );
        const attempt = runner.execute(dir, manifest, { size: 'huge', count: 9, extra: true }, TEST_CALLER);
        await expect(attempt).rejects.toBeInstanceOf(AlfredError);
        await expect(attempt).rejects.toMatchObject({
          code: ErrorCode.ValidationFailed,
          message: expect.stringMatching(/size: .*count: .*/),
        });
        const issues = ((await attempt.catch((e: AlfredError) => e)) as AlfredError).details as {
          issues: { path: string }[];
        };
        expect(issues.issues.map((i) => i.path).sort()).toEqual(['', 'count', 'size']);
        await expect(access(path.join(ws.tenantData('test'), 'skill-data', 'strict-args', 'ran.txt'))).rejects.toThrow(
          /ENOENT/,
        );
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should reject a result that is not {success, result?, error?}',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'bad-shape',
          `export async function execute() { return { ok: true }; }`,
        );
        const { result, record } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result.success).toBe(false);
        expect(result.error).toMatch(/^invalid result: expected \{success: boolean, result\?, error\?: string\}/);
        expect(record.outcome).toBe('invalid_result');
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      "should reject a result that does not match the manifest's result schema",
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'bad-result',
          `export async function execute() { return { success: true, result: { url: 42 } }; }`,
          {
            result: { type: 'object', properties: { url: { type: 'string', required: true } } },
          },
        );
        const { result } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({
          success: false,
          error: expect.stringMatching(/^invalid result: result does not match the manifest's result schema: url: /),
        });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should turn a throw into a failed result with its message',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'thrower',
          `export async function execute() { throw new Error('upstream said no'); }`,
        );
        const { result, record } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({ success: false, error: 'upstream said no' });
        expect(record).toMatchObject({ outcome: 'threw', error: 'upstream said no' });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should report a skill without an execute export',
      async () => {
        const { dir, manifest } = await ws.addSkill('no-export', `export const nothing = 1;`);
        const { result } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({ success: false, error: 'execute.ts must export a function execute(args, ctx)' });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should refuse a result larger than the cap',
      async () => {
        const small = new SkillRunner({
          dataRoot: ws.dataRoot,
          limits: { resultBytes: 1000 },
          osSandbox: SANDBOX_MODE,
        });
        const { dir, manifest } = await ws.addSkill(
          'big-result',
          `export async function execute() { return { success: true, result: 'x'.repeat(5000) }; }`,
        );
        const { result } = await small.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({ success: false, error: 'result exceeds 1000 bytes' });
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );

    it(
      'should keep a skill failure as a failed outcome',
      async () => {
        const { dir, manifest } = await ws.addSkill(
          'soft-fail',
          `export async function execute() { return { success: false, error: 'no data today' }; }`,
        );
        const { result, record } = await runner.execute(dir, manifest, {}, TEST_CALLER);
        expect(result).toEqual({ success: false, error: 'no data today' });
        expect(record.outcome).toBe('failed');
      },
      SANDBOX_TEST_TIMEOUT_MS,
    );
  });
});
