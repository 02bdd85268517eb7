import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { deleteStreamsWithPrefix, describeWithNats, pollUntil, SANDBOX_MODE, testServers } from '#testing';
import { client } from './harness.js';
import { launch, repo, stop } from './process-harness.js';

const describeNats = await describeWithNats();

/** The built artefacts run as users run them: `npm start`'s entry, and each service as its own process. */
describe('built processes', () => {
  let dir: string;
  beforeAll(async () => {
    execFileSync(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-p', join(repo, 'tsconfig.build.json')],
      { stdio: 'inherit' },
    );
    dir = await mkdtemp(join(tmpdir(), 'alfred-proc-'));
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('should serve from dist/services/main.js and shut down cleanly on SIGTERM', async () => {
    const env = { ALFRED_DATA_DIR: join(dir, 'embedded'), ALFRED_API_PORT: '0', ALFRED_EMBEDDER: 'hash' };
    const { child, match } = await launch('dist/services/main.js', env, /Alfred is listening on (http:\/\/[\d.:]+)/);
    const api = client(match[1]!);
    expect((await api.get('/health')).body.status).toBe('healthy');
    expect((await api.post('/memories', { content: 'from a real process' })).status).toBe(201);
    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('should open no inspector on SIGUSR1, however started, and say plainly whether the OS sandbox is on', async () => {
    const env = {
      ALFRED_DATA_DIR: join(dir, 'signal'),
      ALFRED_API_PORT: '0',
      ALFRED_EMBEDDER: 'hash',
      ALFRED_OS_SANDBOX: SANDBOX_MODE,
    };
    const { child, match, output } = await launch(
      'dist/services/main.js',
      env,
      /Alfred is listening on (http:\/\/[\d.:]+)/,
    );
    const announced =
      SANDBOX_MODE === 'required'
        ? /executable skills run inside the OS sandbox \(bubblewrap\)/
        : /UNSAFE: executable skills run WITHOUT the OS sandbox/;
    await pollUntil(() => announced.test(output()), 10_000, 'the OS sandbox announcement');
    child.kill('SIGUSR1');
    await pollUntil(() => output().includes('SIGUSR1 ignored'), 10_000, 'the SIGUSR1 warning');
    expect(output()).not.toMatch(/Debugger listening/);
    expect((await client(match[1]!).get('/health')).status).toBe(200);
    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('should refuse to start on a non-loopback address without API keys', async () => {
    const env = { ALFRED_DATA_DIR: join(dir, 'refused'), ALFRED_API_HOST: '0.0.0.0' };
    await expect(launch('dist/services/main.js', env, /never/)).rejects.toThrow(/exited with 1[\s\S]*ALFRED_API_KEYS/);
  }, 60_000);

  describeNats('over NATS', () => {
    it('should run the memory service and the gateway as separate processes', async () => {
      const prefix = `proc-${randomUUID().slice(0, 8)}.`;
      const common = { NATS_URL: testServers.natsUrl, ALFRED_SUBJECT_PREFIX: prefix, ALFRED_EMBEDDER: 'hash' };
      const memory = await launch(
        'dist/services/memory/src/main.js',
        { ...common, ALFRED_DATA_DIR: join(dir, 'memory') },
        /service started/,
      );
      const gateway = await launch(
        'dist/services/gateway/src/main.js',
        { ...common, ALFRED_API_PORT: '0', ALFRED_LOG_LEVEL: 'info' },
        /gateway listening on/,
      );
      try {
        const port = gateway.output().match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
        expect(port).toBeDefined();
        const api = client(`http://127.0.0.1:${port}`);
        const created = await api.post('/memories', { content: 'crossed NATS between two processes' });
        expect(created.status).toBe(201);
        expect((await api.get(`/memories/${created.body.id}`)).body.content).toBe('crossed NATS between two processes');
      } finally {
        expect(await stop(gateway.child)).toBe(0);
        expect(await stop(memory.child)).toBe(0);
        await deleteStreamsWithPrefix(testServers.natsUrl, prefix);
      }
    }, 60_000);

    it('should run executable skills on a separate skill-runner process with the built sandbox bootstrap', async () => {
      const prefix = `proc-${randomUUID().slice(0, 8)}.`;
      const common = {
        NATS_URL: testServers.natsUrl,
        ALFRED_SUBJECT_PREFIX: prefix,
        ALFRED_EMBEDDER: 'hash',
        ALFRED_OS_SANDBOX: SANDBOX_MODE,
      };
      const registryEnv = {
        ...common,
        ALFRED_DATA_DIR: join(dir, 'registry'),
        ALFRED_PROJECT_DIR: join(dir, 'project'),
        ALFRED_HOME_DIR: join(dir, 'home'),
        ALFRED_SKILLS_WATCH: 'false',
      };
      const registry = await launch('dist/services/skill-registry/src/main.js', registryEnv, /service started/);
      const runner = await launch(
        'dist/services/skill-runner/src/main.js',
        {
          ...common,
          ALFRED_DATA_DIR: join(dir, 'runner'),
          ALFRED_SKILL_SECRETS: 'GREETING=hej',
          ALFRED_SKILL_SECRET_GRANTS: 'GREETING=default',
        },
        /service started/,
      );
      const gateway = await launch(
        'dist/services/gateway/src/main.js',
        { ...common, ALFRED_API_PORT: '0', ALFRED_LOG_LEVEL: 'info' },
        /gateway listening on/,
      );
      try {
        const api = client(
          `http://127.0.0.1:${gateway.output().match(/listening on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]}`,
        );
        const code = `export async function execute(args: { name: string }, ctx: { env: Record<string, string> }) {
          return { success: true, result: ctx.env.GREETING + ' ' + args.name + ' ' + Object.keys(process.env).join() };
        }`;
        const manifest = {
          id: 'greeter',
          description: 'Greets',
          parameters: { name: { type: 'string', required: true } },
          permissions: { env: ['GREETING'] },
        };
        expect((await api.post('/executable-skills', { ...manifest, code })).status).toBe(201);
        const run = await api.post('/executable-skills/greeter/execute', { name: 'Ada' });
        expect(run.body).toMatchObject({ success: true, result: 'hej Ada GREETING' });
      } finally {
        expect(await stop(gateway.child)).toBe(0);
        expect(await stop(runner.child)).toBe(0);
        expect(await stop(registry.child)).toBe(0);
        await deleteStreamsWithPrefix(testServers.natsUrl, prefix);
      }
    }, 60_000);
  });
});
