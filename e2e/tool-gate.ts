import { spawnSync } from 'node:child_process';

/**
 * `describe` for suites that need a system tool: skipped with a printed reason where `tool` does not run, except
 * under CI=true, where a missing tool fails the run instead of hiding the suite.
 */
export function describeWithTool(tool: string, install: string, name: string, fn: () => void): void {
  if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0) {
    describe(name, fn);
    return;
  }
  const reason = `no ${tool} on PATH. Install it (${install}) to run this suite.`;
  if (process.env.CI === 'true') {
    describe(name, () =>
      it(`needs ${tool}`, () => {
        throw new Error(reason);
      }),
    );
    return;
  }
  console.warn(`skipping "${name}": ${reason}`);
  describe.skip(name, fn);
}
