import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { repo } from './process-harness.js';

const run = promisify(execFile);

/** Debian's chromium (apt-get install chromium); ALFRED_CHROMIUM points elsewhere. No browser is downloaded. */
export const CHROMIUM = process.env.ALFRED_CHROMIUM ?? '/usr/bin/chromium';

/**
 * `describe` for suites that drive a real browser: skipped with a printed reason when chromium is missing, except
 * under CI=true, where a missing browser fails the run instead of hiding the suite.
 */
export function describeBrowser(name: string, fn: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, fn);
    return;
  }
  const reason = `no chromium at ${CHROMIUM}. Install it (apt-get install chromium) or set ALFRED_CHROMIUM to run it.`;
  if (process.env.CI === 'true') {
    describe(name, () =>
      it('needs a browser', () => {
        throw new Error(reason);
      }),
    );
    return;
  }
  console.warn(`skipping "${name}": ${reason}`);
  describe.skip(name, fn);
}

/** Headless chromium with the flags this closed network needs (no background connections to Google's hosts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Builds the console from source with Vite into `outDir`, so the test serves the code under test, not a stale dist. */
export async function buildConsole(outDir: string): Promise<void> {
  await run(
    process.execPath,
    [
      join(repo, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      join(repo, 'console/vite.config.ts'),
      '--outDir',
      outDir,
      '--emptyOutDir',
    ],
    {
      cwd: repo,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
}

/**
 * Where the run saves a screenshot of each screen: a folder of the run's own by default (so a test run leaves the
 * tree clean), `docs/console` — the README's pictures — when ALFRED_CONSOLE_SCREENSHOTS names it.
 */
export const SCREENSHOTS = process.env.ALFRED_CONSOLE_SCREENSHOTS
  ? resolve(repo, process.env.ALFRED_CONSOLE_SCREENSHOTS)
  : join(tmpdir(), `alfred-console-screenshots-${process.pid}`);
