import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { GitFixtures, gitServersAvailable, startGitDaemon, type GitServer } from '#testing';
import { startSystem, type TestSystem } from './harness.js';
import { buildConsole, describeBrowser, launchChromium } from './browser-harness.js';
import { skillMd } from './skills-install.fixtures.js';

const KEY = 'console-install-key-0123456789';

/** The console's Skills screen installs from a git URL and shows each installed skill's source and commit. */
describeBrowser('console: install skills from git', () => {
  let out: string;
  let fixtures: GitFixtures;
  let daemon: GitServer;
  let system: TestSystem;
  let browser: Browser;
  let page: Page;
  let commit: string;

  beforeAll(async () => {
    if (!gitServersAvailable().available) throw new Error(`git is needed here: ${gitServersAvailable().reason}`);
    out = await mkdtemp(join(tmpdir(), 'alfred-console-install-'));
    fixtures = await GitFixtures.create();
    commit = await fixtures.commit('pack', {
      'skills/invoice-ledger/SKILL.md': skillMd(
        'invoice-ledger',
        'Turn invoices into ledger lines. Use when bookkeeping.',
      ),
      'skills/Bad/SKILL.md': '---\nname: Bad\n---\nNo description.\n',
    });
    daemon = await startGitDaemon(fixtures.root);
    await buildConsole(out);
    system = await startSystem('embedded', {
      ALFRED_API_KEYS: KEY,
      ALFRED_CONSOLE_DIR: out,
      ALFRED_SKILLS_INSTALL_PRIVATE_HOSTS: '127.0.0.1',
      ALFRED_SKILLS_WATCH: 'false',
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await daemon?.stop();
    await fixtures?.remove();
    if (out) await rm(out, { recursive: true, force: true });
  }, 60_000);

  it('should check, install and then list each skill with its source and commit', async () => {
    const source = `${daemon.url}/pack.git`;
    await page.goto(`${system.url}/console/`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Skills' }).click();
    const form = page.getByRole('form', { name: 'Install skills from git' });
    await form.getByLabel('Repository').fill(source);
    await form.getByLabel('Folder').fill('skills');
    await form.getByRole('button', { name: 'Check' }).click();
    const report = page.getByRole('status', { name: 'Install result' });
    await expect(report.filter({ hasText: 'Would install' }).textContent()).resolves.toContain(commit.slice(0, 12));
    await expect(page.getByRole('list', { name: 'Refused skills' }).textContent()).resolves.toMatch(
      /skills\/Bad\/SKILL\.md:\d+ name: /,
    );
    await form.getByRole('button', { name: 'Install', exact: true }).click();
    await expect(report.filter({ hasText: 'Installed from' }).textContent()).resolves.toMatch(
      /1 skill\(s\), 1 refused/,
    );
    const row = page.getByRole('table', { name: 'Skills' }).getByRole('row').filter({ hasText: 'invoice-ledger' });
    await expect(row.textContent()).resolves.toContain(`${source} @ ${commit.slice(0, 7)}`);
  }, 60_000);
});
