// `npm run build` (also run by `npm install` and before `npm start`): builds only what changed since the last build.
// Plain JavaScript so that it runs before anything is compiled, on any Node that npm itself runs on.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One output of the build. It is rebuilt when the content of any of its inputs (files, or every file under a
 * folder, less `exclude`) differs from the last successful build, or when one of its outputs is missing.
 * `resetWhenMissing` lists state to drop before rebuilding missing outputs (tsc's incremental record would
 * otherwise skip re-emitting files it believes are there).
 */
export const STEPS = [
  {
    name: 'server',
    inputs: ['libs', 'services', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    // What `npm run bench` writes is not compiled.
    exclude: ['bench/results'],
    outputs: ['dist/services/main.js'],
    resetWhenMissing: ['dist/.tsbuildinfo.build'],
    // Incremental: tsc re-checks and re-emits only the files a change affects.
    command: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
  },
  {
    name: 'console',
    inputs: ['console', 'package-lock.json'],
    exclude: [],
    outputs: ['dist/console/index.html'],
    resetWhenMissing: [],
    command: ['node_modules/vite/bin/vite.js', 'build', '--config', 'console/vite.config.ts'],
  },
];

const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);

/** Every file (or symbolic link) at or under `input`, relative to `root`; folders in SKIPPED_DIRS are left out. */
function files(root, input) {
  let stat;
  try {
    stat = lstatSync(join(root, input));
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return [input];
  return readdirSync(join(root, input), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() || entry.isSymbolicLink())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((rel) => !rel.split(sep).some((part) => SKIPPED_DIRS.has(part)));
}

/** A link counts by where it points (it may point at a folder, or nowhere). */
function content(path) {
  return lstatSync(path).isSymbolicLink() ? `-> ${readlinkSync(path)}` : readFileSync(path);
}

/** Every input file of a step, relative to `root`, sorted. */
export function inputFiles(root, step) {
  const excluded = (file) => step.exclude.some((e) => file === e || file.startsWith(`${e}${sep}`));
  return [...new Set(step.inputs.flatMap((input) => files(root, input)))].filter((f) => !excluded(f)).sort();
}

/** A digest of the inputs' paths and contents: what the last successful build of the step was made from. */
export function fingerprint(root, step) {
  const hash = createHash('sha256');
  for (const file of inputFiles(root, step))
    hash
      .update(file)
      .update('\0')
      .update(content(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}

const stampsPath = (root) => join(root, 'dist', '.build-inputs.json');

function readStamps(root) {
  try {
    return JSON.parse(readFileSync(stampsPath(root), 'utf8'));
  } catch {
    return {};
  }
}

/** Runs the steps whose inputs changed; answers what each did. A failed step stops the build (and keeps no stamp). */
export function build(root, { steps = STEPS, force = false, log = console.log } = {}) {
  const stamps = readStamps(root);
  const done = [];
  for (const step of steps) {
    const digest = fingerprint(root, step);
    const missing = step.outputs.filter((o) => !existsSync(join(root, o)));
    if (!force && missing.length === 0 && stamps[step.name] === digest) {
      done.push({ step: step.name, built: false });
      continue;
    }
    if (missing.length > 0) for (const state of step.resetWhenMissing) rmSync(join(root, state), { force: true });
    log(
      `build: ${step.name} (${missing.length > 0 ? `no ${missing.join(', ')}` : force ? 'forced' : 'sources changed'})`,
    );
    const run = spawnSync(process.execPath, step.command, { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) return { ok: false, failed: step.name, code: run.status ?? 1, done };
    stamps[step.name] = digest;
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(stampsPath(root), `${JSON.stringify(stamps, null, 2)}\n`);
    done.push({ step: step.name, built: true });
  }
  return { ok: true, done };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = build(root, { force: process.argv.includes('--force') });
  const fresh = result.done.filter((d) => !d.built).map((d) => d.step);
  if (fresh.length > 0) console.log(`build: ${fresh.join(', ')} up to date`);
  if (!result.ok) {
    console.error(`build: ${result.failed} failed`);
    process.exit(result.code);
  }
}
