import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error a plain-JavaScript script (it runs before anything is compiled), without declarations
import { installMessages } from '../scripts/check-install.mjs';
import { repo } from './process-harness.js';
import { describeWithTool } from './tool-gate.js';

const run = promisify(execFile);
const said = installMessages as (input: { scriptsNode: string; userAgent?: string; required: [number, number] }) => {
  note?: string;
  error?: string;
};
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };

/** What a newcomer's `npm install` prints: nothing alarming that is not actionable. */
describeWithTool('npm', 'it comes with Node', 'npm install output', () => {
  it('should leave no dependency install script unreviewed and warn about no npm config', async () => {
    const { stdout, stderr } = await run('npm', ['install-scripts', 'ls'], { cwd: repo, maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('No packages with unreviewed install scripts.');
    // EBADENGINE alone may remain, where npm runs on a Node older than 22 (explained at install: see below).
    expect(stderr.split('\n').filter((l) => l.startsWith('npm warn') && !l.startsWith('npm warn EBADENGINE'))).toEqual(
      [],
    );
  }, 30_000);

  it('should say in the README what each refused install script does and why it is not needed', () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const refused = Object.entries(pkg.allowScripts)
      .filter(([, allowed]) => !allowed)
      .map(([name]) => name);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('scripts/check-install.mjs', () => {
  const required: [number, number] = [24, 9];
  it("should explain npm's EBADENGINE lines when npm runs on a Node older than 22", () => {
    const out = said({
      scriptsNode: 'v24.21.0',
      userAgent: 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false',
      required,
    });
    expect(out.error).toBeUndefined();
    expect(out.note).toMatch(/npm ran on Node v20\.20\.2.*EBADENGINE.*v24\.21\.0/);
  });

  it('should say nothing when npm runs on Node 22 or later', () => {
    expect(said({ scriptsNode: 'v24.21.0', userAgent: 'npm/11.19.1 node/v22.12.0 linux x64', required })).toEqual({});
    expect(said({ scriptsNode: 'v24.21.0', userAgent: 'npm/11.19.1 node/v24.21.0 linux x64', required })).toEqual({});
  });

  it("should fail the install, with the fix, when npm's scripts do not get the project's Node", () => {
    const out = said({ scriptsNode: 'v20.20.2', userAgent: 'npm/11.19.1 node/v20.20.2 linux x64', required });
    expect(out.error).toMatch(/Node >= 24\.9.*v20\.20\.2.*npm install-scripts approve node/);
  });
});
