import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describeWithGit, GitFixtures, startGitHttps, type FixtureFile, type GitServer } from '#testing';

const run = promisify(execFile);
const REPO = new URL('..', import.meta.url).pathname;
const PLUGIN_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * The Claude Code binary: CLAUDE_CODE_BIN, else the platform package where npm put it (the repository's or CI's
 * cache). Its npm wrapper's postinstall is skipped by npm's install-scripts policy, the platform binary runs as is.
 */
function claudeBinary(): string | undefined {
  const candidates = [
    process.env.CLAUDE_CODE_BIN,
    join(REPO, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude'),
    '/var/cache/alfred/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude',
  ];
  return candidates.find((c): c is string => c !== undefined && existsSync(c));
}

const CLAUDE = claudeBinary();

describe('Claude Code marketplace: .claude-plugin/marketplace.json at the repository root', () => {
  it('should list the plugin folder under the name its manifest has', async () => {
    const market = JSON.parse(await readFile(join(REPO, '.claude-plugin/marketplace.json'), 'utf8'));
    expect(market.name).toMatch(PLUGIN_NAME);
    expect(market.owner).toEqual({ name: expect.any(String) });
    expect(market.plugins).toHaveLength(1);
    const [entry] = market.plugins;
    expect(entry.source).toBe('./plugin');
    const manifest = JSON.parse(await readFile(join(REPO, entry.source, '.claude-plugin/plugin.json'), 'utf8'));
    expect(entry.name).toBe(manifest.name);
  });
});

const describeClaude = CLAUDE
  ? describeWithGit
  : (name: string, fn: () => void) => {
      console.warn(
        `[skip] ${name}: no Claude Code binary (npm install @anthropic-ai/claude-code-linux-x64, or set ` +
          `CLAUDE_CODE_BIN)`,
      );
      describe.skip(name, fn);
    };

describeClaude('Claude Code marketplace: claude plugin validate and /plugin marketplace add + install', () => {
  let home: string;
  let fixtures: GitFixtures;
  let https: GitServer;
  /** Claude Code with a home of its own, no telemetry or updates, and git trusting the test's https server. */
  const claude = async (...args: string[]) => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      GIT_SSL_CAINFO: https.caFile!,
      GIT_TERMINAL_PROMPT: '0',
    };
    const { stdout } = await run(CLAUDE!, args, { env, timeout: 60_000 }).catch(
      (err: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`claude ${args.join(' ')} failed: ${err.stdout ?? ''}${err.stderr ?? ''}${err.message}`);
      },
    );
    // --json prints the result as JSON, after any human lines.
    return JSON.parse(stdout.slice(Math.max(0, stdout.search(/^[[{]/m))));
  };

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'alfred-claude-home-'));
    fixtures = await GitFixtures.create();
    // The repository's own marketplace and plugin files, committed as they are in this checkout.
    const files: Record<string, FixtureFile> = {
      '.claude-plugin/marketplace.json': await readFile(join(REPO, '.claude-plugin/marketplace.json')),
    };
    for (const file of await filesUnder(join(REPO, 'plugin'))) files[relative(REPO, file)] = await readFile(file);
    await fixtures.commit('alfred', files);
    https = await startGitHttps(fixtures.root, fixtures.base);
  }, 60_000);
  afterAll(async () => {
    await https?.stop();
    await fixtures?.remove();
    await rm(home, { recursive: true, force: true });
  });

  it('should pass claude plugin validate --strict on the marketplace and on the plugin', async () => {
    const market = await claude('plugin', 'validate', '--strict', '--json', REPO);
    expect(market).toMatchObject({ success: true, manifest: { type: 'marketplace', errors: [], warnings: [] } });
    const plugin = await claude('plugin', 'validate', '--strict', '--json', join(REPO, 'plugin'));
    expect(plugin).toMatchObject({ success: true, manifest: { errors: [], warnings: [] } });
  });

  it('should add the repository (served over https) as a marketplace and install alfred@alfred from it', async () => {
    const added = await claude('plugin', 'marketplace', 'add', '--json', `${https.url}/alfred.git`);
    expect(added).toMatchObject({ outcome: 'ok', marketplace: 'alfred' });
    const installed = await claude('plugin', 'install', '--json', 'alfred@alfred');
    expect(installed).toMatchObject({ outcome: 'ok', pluginId: 'alfred@alfred' });
    const listed = (await claude('plugin', 'list', '--json')) as Array<{
      id: string;
      enabled: boolean;
      mcpServers?: Record<string, { type: string }>;
    }>;
    expect(listed.find((p) => p.id === 'alfred@alfred')).toMatchObject({
      enabled: true,
      mcpServers: { alfred: { type: 'http' } },
    });
  }, 120_000);
});

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if ((await stat(path)).isFile()) out.push(path);
  }
  return out;
}
