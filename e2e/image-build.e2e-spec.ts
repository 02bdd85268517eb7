import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { client } from './harness.js';
import { launchCommand, repo, stop } from './process-harness.js';

const run = promisify(execFile);

/** One instruction of a Dockerfile stage that the host can replay. */
interface Step {
  readonly op: 'WORKDIR' | 'COPY' | 'RUN';
  readonly args: string;
}

/** The instructions of stage `name` (from its FROM to the next FROM), continuation lines joined, comments dropped. */
function stageSteps(dockerfile: string, name: string): Step[] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const start = lines.findIndex((l) => new RegExp(`^FROM\\s+\\S+\\s+AS\\s+${name}$`, 'i').test(l));
  if (start < 0) throw new Error(`no stage ${name} in the Dockerfile`);
  const steps: Step[] = [];
  for (const line of lines.slice(start + 1)) {
    const [op, ...rest] = line.split(/\s+/);
    if (op!.toUpperCase() === 'FROM') break;
    if (!['WORKDIR', 'COPY', 'RUN'].includes(op!.toUpperCase())) throw new Error(`cannot replay ${line}`);
    steps.push({ op: op!.toUpperCase() as Step['op'], args: rest.join(' ') });
  }
  return steps;
}

/** Replays the steps with the build context `context` and the container's `/` mapped to `root`. */
async function replay(steps: readonly Step[], context: string, root: string): Promise<string[]> {
  let workdir = root;
  const log: string[] = [];
  for (const step of steps) {
    log.push(`${step.op} ${step.args}`);
    if (step.op === 'WORKDIR') {
      workdir = join(root, step.args);
      await mkdir(workdir, { recursive: true });
    } else if (step.op === 'COPY') {
      const parts = step.args.split(/\s+/);
      const dest = parts.pop()!;
      for (const src of parts) {
        // As Docker does: into a folder (`dest/`, or several sources) under the source's own name.
        const target =
          dest.endsWith('/') || parts.length > 1 ? join(workdir, dest, basename(src)) : join(workdir, dest);
        await cp(join(context, src), target, { recursive: true });
      }
    } else {
      // `npm` here runs on the machine's Node, as it would on the image's; the npm scripts find the tools it installed.
      await run('bash', ['-c', step.args], {
        cwd: workdir,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, CI: 'true' },
      });
    }
  }
  return log;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/**
 * The image's own install path (Dockerfile stage `app-npm`) cannot run in a container here (no npm registry from
 * containers), so its steps run on the host, in the Dockerfile's order, read from the Dockerfile itself.
 */
describe('Dockerfile app-npm stage, replayed on the host', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'alfred-image-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }), 120_000);

  it('should install, build and prune into an app that serves the API with production dependencies only', async () => {
    const steps = stageSteps(await readFile(join(repo, 'Dockerfile'), 'utf8'), 'app-npm');
    expect(steps.map((s) => s.op)).toContain('RUN');
    await replay(steps, repo, root);
    const app = join(root, 'app');
    expect(await exists(join(app, 'dist/services/main.js'))).toBe(true);
    // Pruned: the test and build-only tools are gone (typescript stays: @qdrant/js-client-rest depends on it),
    // the runtime dependencies stay.
    for (const dev of ['jest', '@swc/core', 'autocannon', '@nestjs/testing'])
      expect(await exists(join(app, 'node_modules', dev))).toBe(false);
    expect(await exists(join(app, 'node_modules/@nestjs/core'))).toBe(true);
    // Trimmed (docker/slim-node-modules.mjs): this platform's native builds only, no browser runtime, no source maps.
    expect(await readdir(join(app, 'node_modules/onnxruntime-node/bin/napi-v6'))).toEqual([process.platform]);
    expect(await readdir(join(app, 'node_modules/usearch/prebuilds'))).toEqual([`${process.platform}-${process.arch}`]);
    expect(await exists(join(app, 'node_modules/onnxruntime-web'))).toBe(false);
    expect(await exists(join(app, 'node_modules/@lancedb/lancedb/node_modules'))).toBe(false);
    // The final stage adds these from the build context.
    for (const dir of ['skills', 'bin']) await cp(join(repo, dir), join(app, dir), { recursive: true });
    const env = {
      ALFRED_DATA_DIR: join(root, 'data'),
      ALFRED_API_PORT: '0',
      ALFRED_EMBEDDER: 'hash',
      NODE_ENV: 'production',
      HOME: root,
    };
    const started = await launchCommand(
      process.execPath,
      [join(app, 'dist/services/main.js')],
      env,
      /Alfred is listening on (http:\/\/[\d.:]+)/,
    );
    try {
      const api = client(started.match[1]!);
      expect((await api.get('/health')).body.status).toBe('healthy');
      // The build step bundled the web console (console/ → dist/console) and the gateway serves it.
      const page = await api.get('/console');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<script type="module"');
      const created = await api.post('/memories', { content: 'served by the image build replayed on the host' });
      expect(created.status).toBe(201);
      expect((await api.get(`/memories/${created.body.id}`)).body.content).toBe(
        'served by the image build replayed on the host',
      );
    } finally {
      expect(await stop(started.child)).toBe(0);
    }
  }, 900_000);
});
