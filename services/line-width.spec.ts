import { globSync, readFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

/** biome.jsonc as Biome reads it (comments allowed): the one place that says which files are source and how wide. */
function biomeConfig(): { files: { includes: string[] }; formatter: { lineWidth: number } } {
  const text = readFileSync(`${root}biome.jsonc`, 'utf8');
  const { config, error } = ts.parseConfigFileTextToJson('biome.jsonc', text);
  if (error) throw new Error(`biome.jsonc: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  return config;
}

// What Biome formats and lints; JSON is excluded in biome.jsonc, and Biome reads no other kinds here.
const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx|css)$/;
// Ignored by git, so by Biome too (biome.jsonc: vcs.useIgnoreFile).
const UNTRACKED = /(?:^|\/)(?:node_modules|dist|coverage|\.alfred|\.docker-host-app)(?:\/|$)/;

/**
 * The files of biome.jsonc's `files.includes`. A negated pattern names files or whole folders (the fixtures folders,
 * bench/results), so a path is out when it or a folder above it matches one.
 */
function sourceFiles(includes: readonly string[]): string[] {
  const positive = includes.filter((p) => !p.startsWith('!'));
  const negative = includes.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const out = (path: string) => negative.some((n) => matchesGlob(path, n) || matchesGlob(path, `${n}/**`));
  return globSync(positive, { cwd: root })
    .filter((path) => SOURCE.test(path) && !UNTRACKED.test(path) && !out(path))
    .sort();
}

/**
 * Biome's formatter keeps code within its line width but leaves comments, strings and test names as written: this
 * holds those to the same width. Width counts characters (code points), as a reader sees them.
 */
describe('line width', () => {
  const { files, formatter } = biomeConfig();
  const paths = sourceFiles(files.includes);

  it('should find the source Biome checks (every area of the tree, no fixtures, no results)', () => {
    for (const area of ['libs/', 'services/', 'e2e/', 'bench/', 'bin/', 'scripts/', 'console/src/', 'docker/']) {
      expect(`${area} ${paths.some((p) => p.startsWith(area))}`).toBe(`${area} true`);
    }
    expect(paths.filter((p) => p.includes('/fixtures/') || p.startsWith('bench/results/'))).toEqual([]);
    expect(paths).toContain('services/line-width.spec.ts');
  });

  it(`should keep every line of source within ${formatter.lineWidth} characters`, () => {
    const long: string[] = [];
    for (const path of paths) {
      readFileSync(`${root}${path}`, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const width = [...line].length;
          if (width > formatter.lineWidth) long.push(`${path}:${i + 1} (${width})`);
        });
    }
    expect(long).toEqual([]);
  });
});
