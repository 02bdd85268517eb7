import { spawn } from 'node:child_process';
import { startSystem, type TestSystem } from './harness.js';
import { readmeBashBlocks } from './readme-examples.js';
import { describeWithTool } from './tool-gate.js';

/** The line that points the README's examples at `npm start`'s address; the one thing the test changes. */
const BASE_LINE = 'A=http://127.0.0.1:8080';
const MARK = 'README-CALL';
/**
 * Runs as a reader's shell would (bash), stopping at an unset variable or a failed command, with curl wrapped only to
 * report each call's status and request on stderr: the examples themselves run as written.
 */
const PRELUDE =
  `set -euo pipefail\ncurl() { command curl -w '%{stderr}${MARK} %{http_code} %{method} ` +
  `%{url_effective}\\n' "$@"; }`;

function bash(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The curl commands a block runs: one per line once continuations are joined, also inside `X=$(curl …)`. */
const curlCommands = (script: string) =>
  script
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((l) => /^\s*([A-Z]+=\$\()?curl\s/.test(l));

describeWithTool('curl', 'apt-get install curl', "the README's API examples", () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await startSystem('embedded');
  }, 60_000);
  afterAll(() => system?.stop());

  it('should run every block calling the API as written on a fresh server in one shell, each getting 2xx', async () => {
    const blocks = readmeBashBlocks();
    const api = blocks.filter((b) => /\$A\b/.test(b));
    expect(api.length).toBeGreaterThanOrEqual(2);
    // Every curl example of the README is in these blocks: none escapes the run.
    expect(blocks.filter((b) => !api.includes(b) && /\bcurl\b/.test(b))).toEqual([]);
    const script = api.join('\n');
    expect(script.split('\n').filter((l) => l.trim() === BASE_LINE)).toHaveLength(1);
    const commands = curlCommands(script);
    expect(commands.length).toBeGreaterThan(15);

    const run = await bash(`${PRELUDE}\n${script.replace(BASE_LINE, `A=${system.url}`)}`);
    const calls = run.stderr
      .split('\n')
      .filter((l) => l.startsWith(MARK))
      .map((l) => l.slice(MARK.length + 1));
    const failed = calls.filter((c) => !/^2\d\d /.test(c));
    const stderr = run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith(MARK));
    expect({ exit: run.code, stderr, failed }).toEqual({ exit: 0, stderr: [], failed: [] });
    // Each command answered once: none was skipped by a shell error.
    expect(calls).toHaveLength(commands.length);
  });
});
