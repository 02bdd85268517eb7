// `npm test`: jest in a few processes instead of one. On two cores jest runs every suite in its own process (one
// worker is no worker), and each suite's module graph stays in that heap under --experimental-vm-modules: one process
// for ~190 suites ran out of heap. With arguments (`npm test -- e2e/foo`), one run with them, as jest would.
import { spawnSync } from 'node:child_process';

const jest = ['--experimental-vm-modules', '--max-old-space-size=6144', 'node_modules/jest/bin/jest.js'];
const args = process.argv.slice(2);
const runs =
  args.length > 0
    ? [args]
    : [
        ['--selectProjects', 'unit', 'int'],
        ['--selectProjects', 'e2e', '--shard=1/2'],
        ['--selectProjects', 'e2e', '--shard=2/2'],
      ];

const failed = [];
for (const run of runs) {
  if (runs.length > 1) console.log(`\n== jest ${run.join(' ')}`);
  const { status, signal } = spawnSync(process.execPath, [...jest, ...run], { stdio: 'inherit' });
  if (status !== 0) failed.push(`jest ${run.join(' ')}: ${signal ?? `exit ${status}`}`);
}
if (failed.length > 0) {
  console.error(`\n${failed.length} of ${runs.length} jest run(s) failed:\n  ${failed.join('\n  ')}`);
  process.exit(1);
}
