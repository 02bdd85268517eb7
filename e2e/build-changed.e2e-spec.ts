import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error a plain-JavaScript script (it runs before anything is compiled), without declarations
import { build, inputFiles, STEPS } from '../scripts/build.mjs';
import { repo } from './process-harness.js';

const run = promisify(execFile);

interface Step {
  name: string;
  inputs: string[];
  exclude: string[];
  outputs: string[];
  resetWhenMissing: string[];
  command: string[];
}
type Outcome = { ok: boolean; failed?: string; done: Array<{ step: string; built: boolean }> };
const runBuild = build as (
  root: string,
  options?: { steps?: Step[]; force?: boolean; log?: (line: string) => void },
) => Outcome;
const built = (o: Outcome) => o.done.filter((d) => d.built).map((d) => d.step);

/**
 * `npm start` builds only what changed (scripts/build.mjs); these steps stand in for tsc and vite in a folder of its
 * own.
 */
describe('scripts/build.mjs', () => {
  let root: string;
  let steps: Step[];
  const quiet = { log: () => undefined };
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'alfred-build-'));
    await mkdir(join(root, 'src/nested'), { recursive: true });
    await mkdir(join(root, 'ui'), { recursive: true });
    await writeFile(join(root, 'src/nested/a.ts'), 'export const a = 1;\n');
    await writeFile(join(root, 'src/results.json'), '{}');
    await writeFile(join(root, 'ui/page.tsx'), 'export const page = 1;\n');
    await writeFile(join(root, 'shared.json'), '{}');
    // A stand-in build tool: records its run and writes its output (and, for the server, its incremental state).
    await writeFile(
      join(root, 'tool.mjs'),
      "import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';\n" +
        "const [out, ok] = process.argv.slice(2); mkdirSync('dist', { recursive: true });\n" +
        "appendFileSync('runs.log', `${out} ${existsSync('dist/state') ? 'incremental' : 'clean'}\\n`);\n" +
        "writeFileSync(out, 'built'); writeFileSync('dist/state', 'kept'); process.exit(ok === 'fail' ? 2 : 0);\n",
    );
    steps = [
      {
        name: 'server',
        inputs: ['src', 'shared.json'],
        exclude: ['src/results.json'],
        outputs: ['dist/server.js'],
        resetWhenMissing: ['dist/state'],
        command: ['tool.mjs', 'dist/server.js'],
      },
      {
        name: 'console',
        inputs: ['ui', 'shared.json'],
        exclude: [],
        outputs: ['dist/console.html'],
        resetWhenMissing: [],
        command: ['tool.mjs', 'dist/console.html'],
      },
    ];
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('should build everything once, then nothing while nothing changed', () => {
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual(['server', 'console']);
    expect(runBuild(root, { steps, ...quiet })).toEqual({
      ok: true,
      done: [
        { step: 'server', built: false },
        { step: 'console', built: false },
      ],
    });
  });

  it("should rebuild only the step whose inputs' contents changed", async () => {
    runBuild(root, { steps, ...quiet });
    await writeFile(join(root, 'ui/page.tsx'), 'export const page = 2;\n');
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual(['console']);
    await writeFile(join(root, 'src/nested/b.ts'), 'export const b = 1;\n');
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual(['server']);
    await writeFile(join(root, 'shared.json'), '{"changed":true}');
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual(['server', 'console']);
    // Rewritten with the same content, or an excluded file changed: nothing to do.
    await writeFile(join(root, 'src/nested/a.ts'), 'export const a = 1;\n');
    await writeFile(join(root, 'src/results.json'), '{"run":2}');
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual([]);
    expect((await readFile(join(root, 'runs.log'), 'utf8')).trim().split('\n')).toHaveLength(6);
  });

  it('should rebuild a step whose output is missing, from a clean incremental state', async () => {
    runBuild(root, { steps, ...quiet });
    await rm(join(root, 'dist/server.js'));
    const lines: string[] = [];
    expect(built(runBuild(root, { steps, log: (l) => lines.push(l) }))).toEqual(['server']);
    expect(lines).toEqual(['build: server (no dist/server.js)']);
    expect(existsSync(join(root, 'dist/server.js'))).toBe(true);
    expect((await readFile(join(root, 'runs.log'), 'utf8')).trim().split('\n').at(-1)).toBe('dist/server.js clean');
  });

  it('should stop at a failed step and try it again next time', () => {
    const failing = [{ ...steps[0]!, command: [...steps[0]!.command, 'fail'] }, steps[1]!];
    expect(runBuild(root, { steps: failing, ...quiet })).toMatchObject({ ok: false, failed: 'server', done: [] });
    expect(runBuild(root, { steps: failing, ...quiet })).toMatchObject({ ok: false, failed: 'server' });
    expect(built(runBuild(root, { steps, ...quiet }))).toEqual(['server', 'console']);
  });

  it("should watch every source file tsc compiles for the server and for the console's types", async () => {
    const [server, consoleStep] = STEPS as Step[];
    for (const [step, tsconfig] of [
      [server!, 'tsconfig.build.json'],
      [consoleStep!, 'console/tsconfig.json'],
    ] as const) {
      const { stdout } = await run(
        process.execPath,
        [join(repo, 'node_modules/typescript/bin/tsc'), '-p', join(repo, tsconfig), '--listFilesOnly'],
        { maxBuffer: 64 * 1024 * 1024 },
      );
      const compiled = stdout
        .split('\n')
        .filter((f) => f !== '' && !f.includes('/node_modules/'))
        .map((f) => relative(repo, f));
      expect(compiled.length).toBeGreaterThan(5);
      const watched = new Set(inputFiles(repo, step) as string[]);
      expect(compiled.filter((f) => !watched.has(f))).toEqual([]);
    }
  }, 60_000);
});
