import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GitFixtures, startGitDaemon, startGitHttps, type GitServer } from '#testing';
import {
  runSkillsAddCommand,
  runSkillsRemoveCommand,
  runSkillsUpdateCommand,
} from '../libs/skills/src/skills-remote.command.js';
import { client, startSystem, type Client, type Mode, type TestSystem } from './harness.js';
import { firstCommit, MAX_FILE_BYTES, secondCommit } from './skills-install.fixtures.js';

const KEYS = {
  'key-a-0123456789abcdef': 'tenant-a',
  'key-b-0123456789abcdef': 'tenant-b',
  'key-c-0123456789abcdef': 'tenant-c',
};
const as = (key: keyof typeof KEYS) => ({ authorization: `Bearer ${key}` });
const names = (list: Array<{ name: string | null }>) => list.map((s) => s.name).sort();

/**
 * Skills from git end to end through the gateway, against real git servers on loopback (git daemon for git://,
 * git http-backend behind an https server for smart HTTP): install, refusals with their problems, provenance and
 * filters, tenancy, consent before an installed executable runs, update with diffs, delete.
 */
export function skillsInstallSuite(mode: Mode): void {
  let fixtures: GitFixtures;
  let daemon: GitServer;
  let https: GitServer;
  let system: TestSystem;
  let a: Client;
  let b: Client;
  let files: ReturnType<typeof firstCommit>;
  let c1: string;
  let source: string;

  beforeAll(async () => {
    fixtures = await GitFixtures.create();
    files = firstCommit();
    c1 = await fixtures.commit('collection', files);
    daemon = await startGitDaemon(fixtures.root);
    https = await startGitHttps(fixtures.root, fixtures.base);
    source = `${daemon.url}/collection.git`;
    system = await startSystem(mode, {
      ALFRED_API_KEYS: Object.entries(KEYS)
        .map(([k, t]) => `${k}=${t}`)
        .join(','),
      ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS: '127.0.0.1',
      ALFRED_SKILLS_INSTALL_CA_FILE: https.caFile!,
      ALFRED_SKILLS_INSTALL_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      ALFRED_SKILLS_WATCH: 'false',
    });
    a = client(system.url, as('key-a-0123456789abcdef'));
    b = client(system.url, as('key-b-0123456789abcdef'));
  }, 60_000);
  afterAll(async () => {
    await system?.stop();
    await daemon?.stop();
    await https?.stop();
    await fixtures?.remove();
  }, 30_000);

  it("should install a git:// collection's valid skills at its commit, refusing the rest, saying why", async () => {
    const res = await a.post('/skills/install', { source, path: 'skills' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ source, ref: 'main', commit: c1, path: 'skills', dry_run: false });
    expect(names(res.body.installed)).toEqual(['echo-tool', 'git-hygiene', 'pdf-tables']);
    expect(res.body.installed.find((s: { name: string }) => s.name === 'echo-tool')).toMatchObject({
      kinds: ['skill', 'executable'],
      awaiting_consent: true,
    });
    const refused = Object.fromEntries(res.body.refused.map((r: { name: string }) => [r.name, r]));
    expect(Object.keys(refused).sort()).toEqual(['bad-exec', 'broken-rules', 'escaper', 'heavy', 'recall']);
    expect(refused.escaper).toMatchObject({
      reason: 'escape',
      problems: [{ file: 'skills/escaper/secrets.txt', field: 'symlink' }],
    });
    expect(refused.heavy).toMatchObject({
      reason: 'too_large',
      problems: [{ file: 'skills/heavy/data.bin', field: 'file' }],
    });
    expect(refused.recall.reason).toBe('clash');
    expect(refused['bad-exec'].reason).toBe('invalid');
    expect(refused['bad-exec'].problems.map((p: { field: string }) => p.field)).toEqual(
      expect.arrayContaining(['timeoutMs', 'code']),
    );
    const broken = refused['broken-rules'].problems as Array<{ file: string; field: string; line?: number }>;
    expect(broken.every((p) => p.file === 'skills/broken-rules/SKILL.md')).toBe(true);
    expect(broken.map((p) => p.field)).toEqual(expect.arrayContaining(['name', 'description', 'unknown-key']));
    expect(broken.find((p) => p.field === 'unknown-key')?.line).toBe(3);
  });

  it('should show installed_from and who installed it, and filter the index and search by source', async () => {
    const one = await a.get('/skills/pdf-tables');
    expect(one.status).toBe(200);
    expect(one.body.installed_from).toMatchObject({
      source,
      ref: 'main',
      commit: c1,
      path: 'skills/pdf-tables',
      root: 'skills',
      kinds: ['skill'],
    });
    expect(one.body.installed_from.installed_at).toMatch(/^\d{4}-/);
    expect(one.body.provenance).toMatchObject({ tenant: 'tenant-a', agent: 'alfred', via: 'rest' });
    const link = await a.get('/skills/pdf-tables/resources/guide-link.md');
    expect(link.body.content).toBe('# Guide\n\nColumns first.\n');
    const index = await a.get(`/skills?installed_from=${encodeURIComponent(source)}`);
    expect(names(index.body.skills)).toEqual(['echo-tool', 'git-hygiene', 'pdf-tables']);
    const query = encodeURIComponent('tables from PDF invoices');
    const found = await a.get(`/skills/search?q=${query}&installed_from=${encodeURIComponent(`${source}/`)}`);
    expect(found.body.results.map((r: { name: string }) => r.name)).toContain('pdf-tables');
    expect(found.body.results.every((r: { installed_from?: unknown }) => r.installed_from)).toBe(true);
  });

  it("should keep tenant A's installs invisible to tenant B", async () => {
    expect((await b.get('/skills/pdf-tables')).status).toBe(404);
    expect((await b.get(`/skills?installed_from=${encodeURIComponent(source)}`)).body.skills).toEqual([]);
    const search = await b.get('/skills/search?q=tables%20from%20PDF%20invoices');
    expect(search.body.results.map((r: { name: string }) => r.name)).not.toContain('pdf-tables');
    expect((await b.get('/executable-skills')).body.skills.map((s: { id: string }) => s.id)).not.toContain('echo-tool');
    expect((await b.delete('/skills/pdf-tables?confirm=true')).status).toBe(404);
    expect((await b.post('/skills/pdf-tables/update', {})).status).toBe(404);
  });

  it('should run an installed executable skill only after the tenant consents to its version', async () => {
    const before = await a.post('/executable-skills/echo-tool/execute', { text: 'hi' });
    expect(before.status).toBe(403);
    expect(before.body.error.message).toMatch(/consent/);
    const listed = (await a.get('/executable-skills/echo-tool')).body;
    expect(listed).toMatchObject({
      status: 'awaiting_consent',
      installed_from: { commit: c1, kinds: ['skill', 'executable'] },
    });
    const wrong = await a.post('/executable-skills/echo-tool/consent', { digest: `sha256:${'0'.repeat(64)}` });
    expect(wrong.status).toBe(409);
    const consent = await a.post('/executable-skills/echo-tool/consent', { digest: listed.digest });
    expect(consent.body).toMatchObject({ status: 'loaded', consented_digest: listed.digest });
    const run = await a.post('/executable-skills/echo-tool/execute', { text: 'hi' });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ success: true, result: { echoed: 'hi', version: 1 } });
  }, 60_000);

  it('should refuse sources outside the policy before connecting, and report a dry run changing nothing', async () => {
    const plain = await a.post('/skills/install', { source: 'http://127.0.0.1:1/x.git' });
    expect([plain.status, plain.body.error.details.reason]).toEqual([400, 'source_refused']);
    const local = await a.post('/skills/install', { source: `file://${fixtures.root}/collection.git` });
    expect([local.status, local.body.error.details.reason]).toEqual([400, 'source_refused']);
    const ssh = await a.post('/skills/install', { source: 'git@example.com:a/b.git' });
    expect([ssh.status, ssh.body.error.details.reason]).toEqual([400, 'source_refused']);
    const privateHost = await a.post('/skills/install', { source: 'git://10.0.0.1/x.git' });
    expect([privateHost.status, privateHost.body.error.details.reason]).toEqual([403, 'host_refused']);
    const outside = await a.post('/skills/install', { source, path: '../etc' });
    expect([outside.status, outside.body.error.message]).toEqual([400, expect.stringMatching(/path/)]);
    const dry = await b.post('/skills/install', {
      source: `${https.url}/collection.git`,
      path: 'skills',
      skills: ['git-hygiene'],
      dry_run: true,
    });
    expect(dry.body).toMatchObject({ dry_run: true, commit: c1, installed: [{ name: 'git-hygiene' }], refused: [] });
    expect((await b.get('/skills/git-hygiene')).status).toBe(404);
  });

  it('should install over smart https, report a clash, and overwrite only when asked', async () => {
    const https1 = await b.post('/skills/install', {
      source: `${https.url}/collection.git`,
      path: 'skills',
      skills: ['git-hygiene', 'recall'],
    });
    expect(names(https1.body.installed)).toEqual(['git-hygiene']);
    expect(https1.body.refused).toMatchObject([{ name: 'recall', reason: 'clash' }]);
    const again = await b.post('/skills/install', {
      source: `${https.url}/collection.git`,
      path: 'skills',
      skills: ['recall'],
      overwrite: true,
    });
    expect(again.body.installed).toMatchObject([{ name: 'recall', replaced: true }]);
    expect((await b.get('/skills/recall')).body.installed_from).toMatchObject({ path: 'skills/recall' });
    expect((await a.get('/skills/recall')).body.installed_from).toBeUndefined();
  });

  it('should install through the MCP tool skills_install only once confirmed, previewing first', async () => {
    const mcp = new McpClient({ name: 'install-e2e', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${system.url}/mcp`), {
        requestInit: { headers: as('key-b-0123456789abcdef') },
      }),
    );
    try {
      const tool = (await mcp.listTools()).tools.find((t) => t.name === 'skills_install');
      expect(tool?.annotations).toMatchObject({ openWorldHint: true });
      const call = async (args: Record<string, unknown>) =>
        (await mcp.callTool({ name: 'skills_install', arguments: args })) as {
          isError?: boolean;
          structuredContent?: any;
        };
      const preview = await call({ source, path: 'skills', skills: ['pdf-tables'] });
      expect(preview.isError ?? false).toBe(false);
      expect(preview.structuredContent).toMatchObject({
        dry_run: true,
        confirm_required: true,
        installed: [{ name: 'pdf-tables' }],
        confirm_with: { confirm: true, expect_commit: c1 },
      });
      expect((await b.get('/skills/pdf-tables')).status).toBe(404);
      const done = await call(preview.structuredContent.confirm_with);
      expect(done.structuredContent).toMatchObject({ dry_run: false, installed: [{ name: 'pdf-tables' }] });
      expect((await b.get('/skills/pdf-tables')).body.provenance).toMatchObject({ via: 'mcp:skills_install' });
      const stale = await call({ ...preview.structuredContent.confirm_with, expect_commit: 'f'.repeat(40) });
      expect([stale.isError, stale.structuredContent.error.code]).toEqual([true, 'CONFLICT']);
    } finally {
      await mcp.close();
    }
  });

  it('should add, update, remove via the CLI, a line per skill, reaching ALFRED_URL with ALFRED_API_KEY', async () => {
    const lines: string[] = [];
    const io = {
      cwd: '/',
      env: { ALFRED_URL: system.url, ALFRED_API_KEY: 'key-c-0123456789abcdef' },
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(`ERR ${l}`),
    };
    const take = () => lines.splice(0);
    expect(
      await runSkillsAddCommand([source, '--path', 'skills', '--skill', 'git-hygiene', '--skill', 'heavy'], io),
    ).toBe(1);
    expect(take()).toEqual([
      `fetching ${source} (skills) …`,
      `${source} main @ ${c1.slice(0, 12)}`,
      '✓ installed git-hygiene (skill)',
      '✗ refused heavy (too_large)',
      `    skills/heavy/data.bin: file: is ${MAX_FILE_BYTES + 1} bytes; at most ${MAX_FILE_BYTES} are installed`,
      '1 installed, 1 refused',
    ]);
    expect(await runSkillsUpdateCommand(['git-hygiene'], io)).toBe(0);
    expect(take()).toEqual([
      'updating git-hygiene …',
      `${source} main @ ${c1.slice(0, 12)}`,
      '= git-hygiene unchanged',
    ]);
    expect(await runSkillsRemoveCommand(['git-hygiene'], io)).toBe(1);
    expect(take()[0]).toMatch(
      new RegExp(
        /^\? git-hygiene: would remove skill at \/skills\/tenant\/git-hygiene\/SKILL\.md /.source +
          /\(installed from .* @ [0-9a-f]{7}\); repeat with --yes/.source,
      ),
    );
    expect(await runSkillsRemoveCommand(['git-hygiene', '--yes'], io)).toBe(0);
    expect(take()).toEqual(['✓ removed git-hygiene (skill)']);
    expect(await runSkillsAddCommand(['--bogus'], io)).toBe(2);
    expect(await runSkillsAddCommand([source], { ...io, env: { ALFRED_URL: system.url } })).toBe(1);
    expect(take().some((l) => l.startsWith('ERR 401 UNAUTHORIZED'))).toBe(true);
  });

  it("should update to the ref's newest commit with SKILL.md diffs, keep outcomes, ask consent again", async () => {
    expect((await a.post('/skills/pdf-tables/feedback', { success: true })).status).toBe(200);
    const c2 = await fixtures.commit('collection', secondCommit(files), 'second');
    const one = await a.post('/skills/pdf-tables/update', {});
    expect(one.status).toBe(200);
    const [moved] = one.body.sources;
    expect(moved).toMatchObject({ source, ref: 'main', commit: c2, unchanged: [], added: [], gone_upstream: [] });
    expect(moved.updated).toMatchObject([
      { name: 'pdf-tables', from_commit: c1, to_commit: c2, files: { changed: ['SKILL.md'], added: [], removed: [] } },
    ]);
    expect(moved.updated[0].diff).toContain('-Run the extractor.');
    expect(moved.updated[0].diff).toContain('+Run the extractor twice.');
    const after = (await a.get('/skills/pdf-tables')).body;
    expect(after.installed_from).toMatchObject({ commit: c2 });
    expect(after.installed_from.updated_at).toBeDefined();
    expect(after.outcomes).toMatchObject({ success: 1 });

    const all = await a.post('/skills/update', { source });
    const [whole] = all.body.sources;
    expect(whole.commit).toBe(c2);
    expect(whole.updated.map((u: { name: string }) => u.name)).toEqual(['echo-tool']);
    expect(whole.updated[0]).toMatchObject({ files: { changed: ['execute.ts'] }, awaiting_consent: true, diff: '' });
    expect(whole.unchanged).toEqual(['pdf-tables']);
    expect(whole.gone_upstream).toEqual(['git-hygiene']);
    expect(names(whole.added)).toEqual(['new-arrival']);
    expect((await a.post('/executable-skills/echo-tool/execute', { text: 'x' })).status).toBe(403);
  }, 60_000);

  it('should delete an installed skill only with confirmation, and refuse to delete a shared one', async () => {
    const preview = await a.delete('/skills/echo-tool');
    expect(preview.status).toBe(409);
    expect(preview.body.error.details).toMatchObject({
      confirm_required: true,
      kinds: ['skill', 'executable'],
      installed_from: { source },
    });
    expect((await a.get('/skills/echo-tool')).status).toBe(200);
    const gone = await a.delete('/skills/echo-tool?confirm=true');
    expect(gone.body).toMatchObject({ name: 'echo-tool', deleted: true, kinds: ['skill', 'executable'] });
    expect((await a.get('/skills/echo-tool')).status).toBe(404);
    expect((await a.get('/executable-skills/echo-tool')).status).toBe(404);
    expect((await a.delete('/skills/recall?confirm=true')).status).toBe(403);
    expect(
      (await a.get(`/skills?installed_from=${encodeURIComponent(source)}`)).body.skills
        .map((s: { name: string }) => s.name)
        .sort(),
    ).toEqual(['git-hygiene', 'new-arrival', 'pdf-tables']);
  });
}
