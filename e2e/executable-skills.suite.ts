import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '#testing';
import { client, startSystem, type Client, type Mode, type TestSystem } from './harness.js';

export const ADD_CODE = `export async function execute(args: { a: number; b: number }) {
  return { success: true, result: { value: args.a + args.b } };
}`;
const MUL_CODE = `export async function execute(args: { a: number; b: number }) {
  return { success: true, result: { value: args.a * args.b } };
}`;
const PARAMS = { a: { type: 'number', required: true, description: 'left' }, b: { type: 'number', default: 1 } };
const KEYS = { 'key-a-0123456789abcdef': 'tenant-a', 'key-b-0123456789abcdef': 'tenant-b' };
const as = (key: keyof typeof KEYS) => ({ authorization: `Bearer ${key}` });

/** Executable skills end to end through the gateway: management, execution, the log, containment. */
export function executableSkillsSuite(mode: Mode): void {
  let system: TestSystem;
  let api: Client;
  let other: Client;

  beforeAll(async () => {
    system = await startSystem(mode, {
      ALFRED_API_KEYS: Object.entries(KEYS)
        .map(([k, t]) => `${k}=${t}`)
        .join(','),
    });
    api = client(system.url, as('key-a-0123456789abcdef'));
    other = client(system.url, as('key-b-0123456789abcdef'));
  }, 60_000);
  afterAll(() => system?.stop(), 30_000);

  const create = (body: Record<string, unknown>) => api.post('/executable-skills', body);
  const execute = (id: string, args: unknown, c: Client = api) => c.post(`/executable-skills/${id}/execute`, args);

  it('should create a skill that is live at once, listed with its tool schema, and run in the sandbox', async () => {
    const created = await create({ id: 'adder', description: 'Adds two numbers', parameters: PARAMS, code: ADD_CODE });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'adder',
      status: 'loaded',
      version: '1.0.0',
      tool_name: 'skill_adder',
      source: 'managed',
      created_by: 'alfred',
    });
    expect(created.body.input_schema).toMatchObject({ type: 'object', required: ['a'], additionalProperties: false });
    const listed = (await api.get('/executable-skills')).body.skills.find((s: { id: string }) => s.id === 'adder');
    expect(listed).toMatchObject({ status: 'loaded', digest: created.body.digest });
    const run = await execute('adder', { a: 2, b: 3 });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      success: true,
      result: { value: 5 },
      outcome: 'succeeded',
      version: '1.0.0',
      digest: created.body.digest,
    });
    expect(run.body.execution_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.body.duration_ms).toBeGreaterThan(0);
    const alias = await api.post('/skills/adder/execute', { a: 41 });
    expect(alias.body).toMatchObject({ success: true, result: { value: 42 } });
  }, 30_000);

  it('should refuse a duplicate id with 409', async () => {
    const again = await create({ id: 'adder', description: 'Again', code: ADD_CODE });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('should refuse an invalid manifest or unparseable code with 422 and field details, creating nothing', async () => {
    const badId = await create({ id: 'Bad Id', description: 'x', code: ADD_CODE });
    expect(badId.status).toBe(422);
    expect(badId.body.error.details.issues.map((i: { path: string }) => i.path)).toContain('id');
    const badParam = await create({
      id: 'bad-param',
      description: 'x',
      parameters: { a: { type: 'bogus' } },
      code: ADD_CODE,
    });
    expect(badParam.status).toBe(422);
    expect(badParam.body.error.details.issues[0].path).toMatch(/^parameters\.a/);
    const badCode = await create({ id: 'bad-code', description: 'x', code: 'export function execute( {' });
    expect(badCode.status).toBe(422);
    expect(badCode.body.error.message).toMatch(/execute\.ts does not parse/);
    const noExport = await create({ id: 'no-export', description: 'x', code: 'const x = 1;' });
    expect(noExport.status).toBe(422);
    for (const id of ['bad-param', 'bad-code', 'no-export'])
      expect((await api.get(`/executable-skills/${id}`)).status).toBe(404);
  });

  it('should validate arguments before anything runs: 422 with field details and no execution recorded', async () => {
    const before = (await api.get('/executable-skills/adder/executions')).body.total;
    const wrongType = await execute('adder', { a: 'two' });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.details.issues[0].path).toBe('a');
    const missing = await execute('adder', {});
    expect(missing.status).toBe(422);
    const unknown = await execute('adder', { a: 1, c: 2 });
    expect(unknown.status).toBe(422);
    expect((await api.get('/executable-skills/adder/executions')).body.total).toBe(before);
  });

  it("should check a result against the manifest's result schema", async () => {
    const code = `export async function execute() { return { success: true, result: { n: 'not a number' } }; }`;
    await create({
      id: 'typed-result',
      description: 'Returns the wrong type',
      result: { type: 'object', properties: { n: { type: 'integer', required: true } } },
      code,
    });
    const run = await execute('typed-result', {});
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ success: false, outcome: 'invalid_result' });
    expect(run.body.error).toMatch(/invalid result: result does not match/);
  }, 30_000);

  it('should apply an update at once: new behaviour, a new version and digest', async () => {
    const before = (await api.get('/executable-skills/adder')).body;
    const updated = await api.call('PATCH', '/executable-skills/adder', { code: MUL_CODE });
    expect(updated.status).toBe(200);
    expect(updated.body.version).toBe('1.0.1');
    expect(updated.body.digest).not.toBe(before.digest);
    expect(updated.body.code).toBe(MUL_CODE);
    expect((await execute('adder', { a: 6, b: 7 })).body).toMatchObject({
      success: true,
      result: { value: 42 },
      version: '1.0.1',
      digest: updated.body.digest,
    });
    const described = await api.call('PATCH', '/executable-skills/adder', {
      version: '2.0.0',
      description: 'Multiplies',
    });
    expect(described.body).toMatchObject({ version: '2.0.0', description: 'Multiplies' });
    const broken = await api.call('PATCH', '/executable-skills/adder', { parameters: { a: { type: 'bogus' } } });
    expect(broken.status).toBe(422);
    const bad = await api.call('PATCH', '/executable-skills/adder', { id: 'renamed' });
    expect(bad.status).toBe(400);
    expect((await api.get('/executable-skills/adder')).body).toMatchObject({ version: '2.0.0', status: 'loaded' });
  }, 30_000);

  it('should turn a throw into success false with the reason and keep serving', async () => {
    await create({
      id: 'thrower',
      description: 'Throws',
      code: `export async function execute() { throw new Error('boom'); }`,
    });
    const run = await execute('thrower', {});
    expect(run.body).toMatchObject({ success: false, error: 'boom', outcome: 'threw' });
    expect((await execute('adder', { a: 2, b: 2 })).body.result).toEqual({ value: 4 });
  }, 30_000);

  it('should contain a hostile skill created through the API, and run a normal skill right after', async () => {
    const code = `export async function execute(args: unknown, ctx: any) {
      const found: string[] = [];
      try { found.push(await ctx.readFile('/etc/passwd')); }
      catch (err) { found.push('ctx: ' + (err as Error).message); }
      const fs = await import('node:fs');
      return { success: true, result: fs.readFileSync('/etc/passwd', 'utf8') + found.join() };
    }`;
    expect((await create({ id: 'passwd-reader', description: 'Reads /etc/passwd', code })).status).toBe(201);
    const run = await execute('passwd-reader', {});
    expect(run.body).toMatchObject({ success: false, outcome: 'threw' });
    expect(run.body.error).toMatch(/module node:fs is not available to skills/);
    expect(JSON.stringify(run.body)).not.toMatch(/root:x:0:0/);
    expect((await execute('adder', { a: 3, b: 3 })).body).toMatchObject({ success: true, result: { value: 9 } });
  }, 30_000);

  it('should list a broken folder as invalid with its reason after a reload, not run it, keep serving', async () => {
    const root = join(system.dataDir, 'executable-skills');
    await mkdir(join(root, 'hand-broken'), { recursive: true });
    await writeFile(join(root, 'hand-broken', 'skill.json'), '{ not json');
    await mkdir(join(root, 'wrong-id'), { recursive: true });
    await writeFile(
      join(root, 'wrong-id', 'skill.json'),
      JSON.stringify({ id: 'other', name: 'x', description: 'x', version: '1.0.0', createdBy: 'me' }),
    );
    await writeFile(join(root, 'wrong-id', 'execute.ts'), ADD_CODE);
    const reloaded = await api.post('/executable-skills/reload');
    expect(reloaded.status).toBe(200);
    expect(reloaded.body.added).toEqual(expect.arrayContaining(['hand-broken', 'wrong-id']));
    const skills = (await api.get('/executable-skills')).body.skills as Array<{
      id: string;
      status: string;
      reason?: string;
    }>;
    expect(skills.find((s) => s.id === 'hand-broken')).toMatchObject({
      status: 'invalid',
      reason: expect.stringMatching(/skill\.json is not JSON/),
    });
    expect(skills.find((s) => s.id === 'wrong-id')).toMatchObject({
      status: 'invalid',
      reason: expect.stringMatching(/does not match the folder name/),
    });
    expect(skills.find((s) => s.id === 'adder')).toMatchObject({ status: 'loaded' });
    const refused = await execute('hand-broken', {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/invalid and cannot run/);
    expect((await execute('adder', { a: 1, b: 5 })).body.result).toEqual({ value: 5 });
  }, 30_000);

  it("should keep an execution log per skill, newest first, paginated and scoped to the caller's tenant", async () => {
    for (const a of [10, 11]) await execute('adder', { a, b: 1 });
    // Another tenant cannot run it (it is not there for them), so their log of it stays empty.
    expect((await execute('adder', { a: 99, b: 1 }, other)).status).toBe(404);
    const mine = await api.get('/executable-skills/adder/executions?limit=2');
    expect(mine.status).toBe(200);
    expect(mine.body.executions).toHaveLength(2);
    expect(mine.body.total).toBeGreaterThanOrEqual(6);
    const [newest, next] = mine.body.executions;
    expect(Date.parse(newest.startedAt)).toBeGreaterThanOrEqual(Date.parse(next.startedAt));
    expect(newest).toMatchObject({
      skillId: 'adder',
      version: '2.0.0',
      outcome: 'succeeded',
      caller: { tenant: 'tenant-a', agent: 'alfred' },
    });
    expect(newest.runner).toEqual(expect.any(String));
    const page2 = await api.get('/skills/adder/executions?limit=2&offset=2');
    expect(page2.body.executions[0].executionId).not.toBe(newest.executionId);
    const theirs = await other.get('/executable-skills/adder/executions');
    expect(theirs.body.total ?? 0).toBe(0);
  }, 30_000);

  it('should ask for confirmation before deleting, then delete at once', async () => {
    const asked = await api.delete('/executable-skills/thrower');
    expect(asked.status).toBe(409);
    expect(asked.body.error.details).toMatchObject({
      confirm_required: true,
      id: 'thrower',
      files: expect.arrayContaining(['execute.ts', 'skill.json']),
    });
    expect((await api.get('/executable-skills/thrower')).status).toBe(200);
    const deleted = await api.delete('/executable-skills/thrower?confirm=true');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: 'thrower', deleted: true });
    expect((await api.get('/executable-skills/thrower')).status).toBe(404);
    expect((await execute('thrower', {})).status).toBe(404);
  });

  it('should rank by outcomes: a skill failing again and again, not once, drops below an equal one', async () => {
    // A SKILL.md per executable skill of the same name (its instructions); the flaky one matches the query a little
    // better.
    for (const [name, description] of [
      ['ship-flaky', 'Deploy the web app to production. Use to deploy the web app to production servers.'],
      ['ship-steady', 'Deploy the web app to production servers with a health check. Use when releasing.'],
    ]) {
      expect((await api.post('/skills', { name, description, body: `Run the ${name} tool.` })).status).toBe(201);
    }
    await create({
      id: 'ship-flaky',
      description: 'Deploys, sometimes',
      code: `export async function execute() { throw new Error('deploy target unreachable'); }`,
    });
    await create({
      id: 'ship-steady',
      description: 'Deploys',
      code: `export async function execute() { return { success: true, result: 'deployed' }; }`,
    });
    const order = async () =>
      (
        (await api.get('/skills/search?q=deploy%20the%20web%20app%20to%20production&limit=10')).body.results as Array<{
          name: string;
        }>
      )
        .map((r) => r.name)
        .filter((n) => n.startsWith('ship-'));
    const counted = async (name: string) => {
      const o = (await api.get(`/skills/${name}`)).body.outcomes as { success: number; failure: number } | undefined;
      return o ? o.success + o.failure : 0;
    };
    let ran = 0;
    const runs = async (times: number) => {
      for (let i = 0; i < times; i++) {
        expect((await execute('ship-flaky', {})).body).toMatchObject({ success: false, outcome: 'threw' });
        expect((await execute('ship-steady', {})).body).toMatchObject({ success: true, outcome: 'succeeded' });
      }
      ran += times;
      // A run is counted just after its answer: the order is checked once every run has been.
      await pollUntil(
        async () => (await counted('ship-flaky')) === ran && (await counted('ship-steady')) === ran,
        10_000,
        `${ran} outcomes of each`,
      );
    };
    expect(await order()).toEqual(['ship-flaky', 'ship-steady']);
    await runs(1);
    expect(await order()).toEqual(['ship-flaky', 'ship-steady']);
    expect((await api.get('/skills/ship-flaky')).body.outcomes).toEqual({ success: 0, failure: 1, estimate: 0.429 });
    await runs(9);
    expect(await order()).toEqual(['ship-steady', 'ship-flaky']);
    expect((await api.get('/skills/ship-steady')).body.outcomes).toEqual({ success: 10, failure: 0, estimate: 0.813 });
    // Each tenant's record is its own.
    expect(
      (await other.get('/skills/search?q=deploy%20the%20web%20app%20to%20production')).body.results.map(
        (r: { name: string }) => r.name,
      ),
    ).not.toContain('ship-flaky');
  }, 60_000);
}
