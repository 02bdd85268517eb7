import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, cp, link, mkdir, mkdtemp, realpath, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicLoopback, describeOsSandbox, freePort, pollUntil, type ScriptedBlock } from '#testing';
import { client, type Client } from './harness.js';
import { named, streamTurn } from './agent-harness.js';
import { repo, stop } from './process-harness.js';

const tool = (name: string, input: Record<string, unknown>): ScriptedBlock => ({ type: 'tool_use', name, input });
const ROOT = process.getuid?.() === 0;
if (!ROOT)
  console.warn('skipping the private-folder suite: it is about a root service (run the tests as root, as CI does)');

/**
 * The first try on a VM: a checkout in a private folder (`/root`, a `mktemp -d` folder: 0700), started as root with the
 * default `./.alfred/data` inside it. Sandboxes run as tenants' own kernel users, who cannot pass through that
 * folder; they must still run skills and bash. The project is "installed" under the 0700 folder as far as a sandbox
 * can tell: its sources, the Node binary it runs and binds, and its data folder (node_modules is linked: nothing in
 * it is bound into a sandbox but Node's own folder, which is copied).
 */
(ROOT ? describeOsSandbox : describe.skip)(
  'an installed project and its data folder under a 0700 folder, as root',
  () => {
    let parent: string;
    let app: string;
    let model: AnthropicLoopback;
    let alfred: ChildProcess;
    let api: Client;
    let url: string;
    let output = '';

    beforeAll(async () => {
      parent = await realpath(await mkdtemp(join(tmpdir(), 'alfred-private-')));
      expect((await stat(parent)).mode & 0o777).toBe(0o700);
      app = join(parent, 'checkout');
      await mkdir(join(app, 'bin'), { recursive: true });
      await Promise.all(
        ['libs', 'services', 'skills', 'e2e/source-loader.mjs', 'package.json'].map((entry) =>
          cp(join(repo, entry), join(app, entry), { recursive: true }),
        ),
      );
      await symlink(join(repo, 'node_modules'), join(app, 'node_modules'));
      const node = join(app, 'bin', 'node');
      await link(await realpath(process.execPath), node).catch(() => copyFile(process.execPath, node));
      model = await AnthropicLoopback.start({});
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      alfred = spawn(
        node,
        [
          '--disable-sigusr1',
          '--import',
          join(app, 'e2e/source-loader.mjs'),
          '--conditions=alfred-source',
          join(app, 'services/main.ts'),
        ],
        {
          cwd: app,
          env: {
            HOME: join(parent, 'home'),
            ALFRED_API_PORT: String(port),
            ALFRED_EMBEDDER: 'hash',
            ALFRED_LOG_LEVEL: 'info',
            ALFRED_SKILLS_WATCH: 'false',
            ANTHROPIC_BASE_URL: model.url,
            ANTHROPIC_API_KEY: model.apiKey,
            ALFRED_MODEL_MAX_RETRIES: '0',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      alfred.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      alfred.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const withOutput = (err: Error) => {
        throw new Error(`${err.message}; Alfred said:\n${output.slice(-3000)}`);
      };
      await pollUntil(
        async () => (await fetch(`${url}/health`).catch(() => undefined))?.status === 200,
        120_000,
        '/health',
      ).catch(withOutput);
      const announced = () =>
        /executable skills run inside the OS sandbox/.test(output) &&
        /bash commands run inside the OS sandbox/.test(output);
      await pollUntil(announced, 30_000, 'both sandbox announcements').catch(withOutput);
      api = client(url);
    }, 180_000);

    afterAll(async () => {
      if (alfred) await stop(alfred);
      await model?.close();
      if (parent) await rm(parent, { recursive: true, force: true });
    });

    it('should keep the data folder where the operator put it: in the 0700 checkout', async () => {
      expect((await stat(join(app, '.alfred', 'data'))).isDirectory()).toBe(true);
      expect(output).not.toMatch(/OFF:|Permission denied/);
    });

    it('should run an executable skill that writes to its data folder', async () => {
      const code = `export async function execute(args: { a: number; b: number }, ctx: any) {
  await ctx.writeFile('self/last.txt', String(args.a + args.b));
  return { success: true, result: Number(await ctx.readFile('self/last.txt')) };
}`;
      const created = await api.post('/executable-skills', {
        id: 'private-adder',
        description: 'adds',
        code,
        parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
        permissions: { fs: { write: ['self'] } },
      });
      expect(created.status).toBe(201);
      const run = await api.post('/executable-skills/private-adder/execute', { a: 2, b: 40 });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ success: true, result: 42, outcome: 'succeeded' });
    }, 60_000);

    it("should run an agent's bash turn in its workspace, reaching the API", async () => {
      const session = (await api.post('/sessions', {})).body.id as string;
      const command =
        'echo kept > notes.txt && cat notes.txt && pwd && curl -sS -o /dev/null -w "api %{http_code}\\n" ' +
        '"$ALFRED_API_URL/memories"';
      model.script(
        { content: [tool('bash', { command })], stopReason: 'tool_use' },
        { content: [{ type: 'text', text: 'done' }] },
      );
      const { status, events } = await streamTurn(url, session, 'run it');
      expect(status).toBe(200);
      const result = named(events, 'tool_result')[0];
      expect(result).toMatchObject({ is_error: false });
      expect(result.content).toMatch(/^kept\n\/workspace\napi 200\n\[exit code 0\]$/);
    }, 60_000);
  },
);
