import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { skillDigest } from '#sandbox';
import { bumpPatch, ExecutableSkillCatalog } from './executable-skill.catalog.js';
import { ExecutableSkillStore } from './executable-skill.store.js';

const CODE = 'export async function execute() { return { success: true, result: 1 }; }';
const scope = { tenant: 't', agent: 'maker' };

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    return err instanceof AlfredError ? err.code : String(err);
  }
}

describe(ExecutableSkillCatalog.name, () => {
  let dir: string;
  let catalog: ExecutableSkillCatalog;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-exec-catalog-'));
    await mkdir(join(dir, 'bundled', 'shipped'), { recursive: true });
    await writeFile(
      join(dir, 'bundled', 'shipped', 'skill.json'),
      JSON.stringify({ id: 'shipped', name: 'Shipped', description: 'd', version: '1.0.0', createdBy: 'alfred' }),
    );
    await writeFile(join(dir, 'bundled', 'shipped', 'execute.ts'), CODE);
    await mkdir(join(dir, 'bundled', 'markdown-only'), { recursive: true });
    await writeFile(join(dir, 'bundled', 'markdown-only', 'SKILL.md'), '---\nname: markdown-only\n---\n');
    catalog = new ExecutableSkillCatalog(new ExecutableSkillStore(join(dir, 'managed'), join(dir, 'bundled')));
    await catalog.reload();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('reload', () => {
    it('should load bundled folders that have a skill.json, read-only', async () => {
      expect(catalog.list(scope.tenant).map((s) => [s.id, s.source, s.status])).toEqual([
        ['shipped', 'bundled', 'loaded'],
      ]);
      expect(await codeOf(catalog.update(scope.tenant, 'shipped', { description: 'x' }))).toBe(ErrorCode.Forbidden);
      expect(await codeOf(catalog.delete(scope.tenant, 'shipped', true))).toBe(ErrorCode.Forbidden);
    });
  });

  describe('create', () => {
    it('should write the folder, fill defaults and hash exactly the files on disk', async () => {
      const created = await catalog.create(scope, { id: 'fresh', description: 'New', code: CODE });
      expect(created).toMatchObject({
        status: 'loaded',
        name: 'fresh',
        version: '1.0.0',
        created_by: 'maker',
        code: CODE,
      });
      expect(created.digest).toBe(
        await skillDigest(join(dir, 'managed', 'tenants', encodeURIComponent(scope.tenant), 'fresh')),
      );
      expect(await codeOf(catalog.create(scope, { id: 'fresh', description: 'Again', code: CODE }))).toBe(
        ErrorCode.Conflict,
      );
      expect(await codeOf(catalog.create(scope, { id: 'shipped', description: 'Shadow', code: CODE }))).toBe(
        ErrorCode.Conflict,
      );
    });
  });

  describe('update', () => {
    it('should bump the patch version, change the digest and keep the old version on a refused patch', async () => {
      const v1 = await catalog.create(scope, { id: 'evolving', description: 'v1', code: CODE });
      const v2 = await catalog.update(scope.tenant, 'evolving', { code: CODE.replace('1 }', '2 }') });
      expect(v2.version).toBe('1.0.1');
      expect(v2.digest).not.toBe(v1.digest);
      expect(await codeOf(catalog.update(scope.tenant, 'evolving', { timeoutMs: 5 }))).toBe(ErrorCode.ValidationFailed);
      expect(await codeOf(catalog.update(scope.tenant, 'evolving', { code: 'nope(' }))).toBe(
        ErrorCode.ValidationFailed,
      );
      expect(catalog.get(scope.tenant, 'evolving')).toMatchObject({ version: '1.0.1', digest: v2.digest });
    });
  });

  describe('files', () => {
    it('should serve the files of the current digest and refuse another', async () => {
      const created = await catalog.create(scope, { id: 'served', description: 'd', code: CODE });
      const files = catalog.files(scope.tenant, 'served', created.digest);
      expect(files.files.map((f) => f.path)).toEqual(['execute.ts', 'skill.json']);
      expect(
        await codeOf(Promise.resolve().then(() => catalog.files(scope.tenant, 'served', `sha256:${'0'.repeat(64)}`))),
      ).toBe(ErrorCode.Conflict);
    });
  });

  describe('tenancy', () => {
    it("should keep a tenant's skills invisible and untouchable to every other tenant", async () => {
      await catalog.create(scope, { id: 'private-one', description: 'd', code: CODE });
      const other = 'tenant-b';
      expect(catalog.list(other).map((s) => s.id)).toEqual(['shipped']);
      for (const attempt of [
        () => Promise.resolve().then(() => catalog.get(other, 'private-one')),
        () => Promise.resolve().then(() => catalog.resolve(other, 'private-one')),
        () => catalog.update(other, 'private-one', { description: 'mine now' }),
        () => catalog.delete(other, 'private-one', true),
      ])
        expect(await codeOf(attempt())).toBe(ErrorCode.NotFound);
      // The same id is free for the other tenant: it gets its own skill, not a view of the first.
      await catalog.create({ tenant: other, agent: 'maker' }, { id: 'private-one', description: 'theirs', code: CODE });
      expect(catalog.get(scope.tenant, 'private-one').description).toBe('d');
      expect(catalog.get(other, 'private-one').description).toBe('theirs');
    });

    it("should refuse an agent's change made without the user's consent", async () => {
      expect(
        await codeOf(
          catalog.create(scope, { id: 'sneaky', description: 'd', code: CODE }, { by: 'agent', consented: false }),
        ),
      ).toBe(ErrorCode.Forbidden);
      expect(catalog.list(scope.tenant).map((s) => s.id)).not.toContain('sneaky');
    });
  });

  describe('install', () => {
    const files = (code: string) =>
      new Map([
        [
          'skill.json',
          Buffer.from(
            JSON.stringify({ id: 'fetched', name: 'fetched', description: 'd', version: '1.0.0', createdBy: 'git:x' }),
          ),
        ],
        ['execute.ts', Buffer.from(code)],
      ]);

    it('should run an installed skill only once the tenant consented to that exact version', async () => {
      const { skill } = await catalog.install(scope.tenant, 'fetched', files(CODE));
      expect(skill.status).toBe('awaiting_consent');
      expect(await codeOf(Promise.resolve().then(() => catalog.resolve(scope.tenant, 'fetched')))).toBe(
        ErrorCode.Forbidden,
      );
      expect(await codeOf(catalog.consent(scope.tenant, 'fetched', `sha256:${'0'.repeat(64)}`))).toBe(
        ErrorCode.Conflict,
      );
      expect((await catalog.consent(scope.tenant, 'fetched', skill.digest)).status).toBe('loaded');
      expect(catalog.resolve(scope.tenant, 'fetched').status).toBe('loaded');
      // The same files again keep the consent; changed code needs it again; and it all survives a reload.
      expect((await catalog.install(scope.tenant, 'fetched', files(CODE))).skill.status).toBe('loaded');
      expect((await catalog.install(scope.tenant, 'fetched', files(CODE.replace('1 }', '2 }')))).skill.status).toBe(
        'awaiting_consent',
      );
      await catalog.reload();
      expect(catalog.get(scope.tenant, 'fetched').status).toBe('awaiting_consent');
    });

    it('should put the previous version back when the new one is invalid', async () => {
      const { skill } = await catalog.install(scope.tenant, 'fetched', files(CODE));
      expect(await codeOf(catalog.install(scope.tenant, 'fetched', files('nope(')))).toBe(ErrorCode.ValidationFailed);
      expect(catalog.get(scope.tenant, 'fetched')).toMatchObject({ digest: skill.digest, status: 'awaiting_consent' });
    });
  });

  describe('delete', () => {
    it('should only delete with confirmation', async () => {
      await catalog.create(scope, { id: 'doomed', description: 'd', code: CODE });
      expect(await codeOf(catalog.delete(scope.tenant, 'doomed', false))).toBe(ErrorCode.Conflict);
      expect(catalog.resolve(scope.tenant, 'doomed').status).toBe('loaded');
      await catalog.delete(scope.tenant, 'doomed', true);
      expect(await codeOf(Promise.resolve().then(() => catalog.resolve(scope.tenant, 'doomed')))).toBe(
        ErrorCode.NotFound,
      );
    });
  });
});

describe(bumpPatch.name, () => {
  it('should bump the patch number and restart unparseable versions', () => {
    expect(bumpPatch('1.2.3')).toBe('1.2.4');
    expect(bumpPatch('1.2.3-beta.1+x')).toBe('1.2.4');
    expect(bumpPatch(undefined)).toBe('1.0.0');
  });
});
