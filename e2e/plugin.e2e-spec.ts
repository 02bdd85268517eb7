import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse as parseYaml } from 'yaml';
import { findSkillCandidates, validateSkillFile } from '#skills';
import { startSystem, type TestSystem } from './harness.js';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';

const PLUGIN = new URL('../plugin/', import.meta.url).pathname;
const COMMANDS = ['checkpoint', 'diagnose', 'remember', 'resume', 'search', 'status'];
// What Claude Code's plugin reference documents (pinned here): the manifest's keys, a command's frontmatter keys.
const MANIFEST_KEYS = [
  'name',
  'version',
  'description',
  'author',
  'homepage',
  'repository',
  'license',
  'keywords',
  'commands',
  'agents',
  'skills',
  'hooks',
  'mcpServers',
  'outputStyles',
  'lspServers',
];
const COMMAND_KEYS = ['description', 'argument-hint', 'allowed-tools', 'model', 'disable-model-invocation'];
const PLUGIN_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
// .mcp.json expands ${VAR} and ${VAR:-default} (in url and headers among others); a bare $VAR is not expanded.
const EXPANSION = /\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g;

const read = (path: string) => readFile(join(PLUGIN, path), 'utf8');
function frontmatter(text: string): { meta: Record<string, unknown>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) throw new Error('no YAML frontmatter');
  return { meta: parseYaml(m[1]!) as Record<string, unknown>, body: m[2]! };
}
const expand = (s: string, env: Record<string, string | undefined>) =>
  s.replace(EXPANSION, (_all, name: string, fallback?: string) => env[name] ?? fallback ?? `\${${name}}`);
/** Every MCP tool a plugin text names: backticked names in Alfred's tool families (an invented one fails below). */
const toolsNamed = (text: string) =>
  [...text.matchAll(/`((?:skills|memory|checkpoint|remediation)_[a-z]+|recall)`/g)].map((m) => m[1]!);

describe('Claude Code plugin: files in the documented formats', () => {
  it('should have a manifest Claude Code accepts, with components at the plugin root', async () => {
    const manifest = JSON.parse(await read('.claude-plugin/plugin.json'));
    expect(manifest.name).toMatch(PLUGIN_NAME);
    expect(manifest.version).toMatch(SEMVER);
    expect(typeof manifest.description).toBe('string');
    expect(manifest.author).toEqual({ name: expect.any(String) });
    expect(Object.keys(manifest).filter((k) => !MANIFEST_KEYS.includes(k))).toEqual([]);
    expect(await readdir(join(PLUGIN, '.claude-plugin'))).toEqual(['plugin.json']);
    for (const dir of ['commands', 'skills']) expect((await stat(join(PLUGIN, dir))).isDirectory()).toBe(true);
  });

  it('should have the six commands as markdown with documented frontmatter', async () => {
    const files = (await readdir(join(PLUGIN, 'commands'))).sort();
    expect(files).toEqual(COMMANDS.map((c) => `${c}.md`));
    for (const file of files) {
      const { meta, body } = frontmatter(await read(`commands/${file}`));
      expect(typeof meta.description).toBe('string');
      expect(Object.keys(meta).filter((k) => !COMMAND_KEYS.includes(k))).toEqual([]);
      if (meta['argument-hint'] !== undefined) expect(body).toContain('$ARGUMENTS');
      expect(toolsNamed(body).length).toBeGreaterThan(0);
    }
  });

  it('should have skills that pass the Agent Skills rules strictly', async () => {
    const { candidates } = await findSkillCandidates(join(PLUGIN, 'skills'));
    expect(candidates.map((c) => c.expectedName).sort()).toEqual([
      'checkpoint-workflow',
      'cross-session-memory',
      'error-remediation',
      'using-alfred',
    ]);
    for (const c of candidates)
      expect(await validateSkillFile(c)).toMatchObject({ valid: true, errors: [], warnings: [] });
  });

  it("should declare Alfred's /mcp as an HTTP server with the key from the environment", async () => {
    const { mcpServers } = JSON.parse(await read('.mcp.json'));
    expect(Object.keys(mcpServers)).toEqual(['alfred']);
    const alfred = mcpServers.alfred;
    expect(alfred.type).toBe('http');
    expect(expand(alfred.url, {})).toBe('http://127.0.0.1:8080/mcp');
    expect(expand(alfred.headers.Authorization, { ALFRED_API_KEY: 'k-123' })).toBe('Bearer k-123');
    expect(JSON.stringify(alfred)).not.toMatch(/\$(?!\{)/);
  });
});

describe('Claude Code plugin: every MCP tool it names exists on /mcp and answers', () => {
  const KEY = 'plugin-e2e-key-0123456789';
  let system: TestSystem;
  let dirs: SkillDirs;
  let mcp: Client;

  beforeAll(async () => {
    dirs = await skillDirs({ withProjectSkills: false });
    system = await startSystem('embedded', skillEnv(dirs, { ALFRED_API_KEYS: KEY, ALFRED_SKILLS_WATCH: 'false' }));
    const { mcpServers } = JSON.parse(await read('.mcp.json'));
    const env = { ALFRED_URL: system.url, ALFRED_API_KEY: KEY };
    const headers = Object.fromEntries(
      Object.entries(mcpServers.alfred.headers as Record<string, string>).map(([k, v]) => [k, expand(v, env)]),
    );
    mcp = new Client({ name: 'claude-code-plugin-e2e', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(expand(mcpServers.alfred.url, env)), { requestInit: { headers } }),
    );
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await system?.stop();
    await dirs?.remove();
  });

  it('should answer each tool the commands and skills name', async () => {
    const texts = await Promise.all([
      ...COMMANDS.map((c) => read(`commands/${c}.md`)),
      ...(await readdir(join(PLUGIN, 'skills'))).map((s) => read(`skills/${s}/SKILL.md`)),
    ]);
    const named = [...new Set(texts.flatMap(toolsNamed))].sort();
    const offered = new Set((await mcp.listTools()).tools.map((t) => t.name));
    expect(named.filter((n) => !offered.has(n))).toEqual([]);

    const ok = async (name: string, args: Record<string, unknown>) => {
      const res = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };
      expect({ name, isError: res.isError ?? false }).toEqual({ name, isError: false });
      return res.structuredContent;
    };
    const memory = await ok('memory_record', { content: 'The plugin e2e stores this', tags: ['plugin'] });
    const checkpoint = await ok('checkpoint_save', {
      name: 'plugin-e2e',
      summary: 'Checking the plugin',
      done: ['files'],
      next: ['tools'],
    });
    const fix = await ok('remediation_record', {
      error_message: 'Error: EADDRINUSE :::8080',
      fix: 'Stop the other server.',
    });
    const samples: Record<string, Record<string, unknown>> = {
      memory_record: { content: 'Another fact' },
      memory_search: { q: 'plugin e2e' },
      memory_feedback: { id: memory.id, helpful: true },
      checkpoint_save: { name: 'again', summary: 'Again' },
      checkpoint_list: { limit: 5 },
      checkpoint_resume: { id: checkpoint.id, level: 'summary' },
      remediation_search: { q: 'Error: EADDRINUSE :::3000' },
      remediation_record: { error_message: 'TypeError: x is undefined', fix: 'Check x first.' },
      remediation_feedback: { id: fix.id, helpful: true },
      recall: { q: 'plugin', budget_tokens: 2000 },
      skills_search: { q: 'remember a preference' },
      skills_get: { name: 'remember' },
      skills_index: { format: 'markdown' },
      skills_create: {
        name: 'plugin-made',
        description: 'Made by the plugin e2e. Use when testing.',
        body: '# Plugin made\n',
      },
    };
    for (const name of named) {
      expect({ name, sample: samples[name] !== undefined }).toEqual({ name, sample: true });
      await ok(name, samples[name]!);
    }
  }, 60_000);
});
