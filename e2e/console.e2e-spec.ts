import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { ScriptedReply } from '#testing';
import { client, type Client } from './harness.js';
import { startAgentSystem, type AgentSystem } from './agent-harness.js';
import { buildConsole, describeBrowser, launchChromium, SCREENSHOTS } from './browser-harness.js';
import { skillDirs, skillEnv, type SkillDirs } from './skills-fixtures.js';

/** A browser step on a loaded 2-core machine can take seconds; no assertion is on time. */
const TEST_TIMEOUT = 60_000;
const KEY = 'console-e2e-key-0123456789abcdef';
const OTHER_KEY = 'console-e2e-other-tenant-key-0123';
const say = (text: string, eventDelayMs = 0, streamPieces?: number): ScriptedReply => ({ content: [{ type: 'text', text }], eventDelayMs, streamPieces });
const call = (name: string, input: Record<string, unknown> = {}): ScriptedReply => ({ content: [{ type: 'tool_use', name, input }], stopReason: 'tool_use' });

/** Issue 17: the web console in Debian's chromium, against a real embedded Alfred and the loopback model. */
describeBrowser('web console in a real browser', () => {
  let sys: AgentSystem;
  let dirs: SkillDirs;
  let out: string;
  let browser: Browser;
  let page: Page;
  let api: Client;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'alfred-console-'));
    dirs = await skillDirs({ withProjectSkills: false });
    // A broken skill (its frontmatter is not YAML: line 3) is skipped; a skill whose name breaks the rules is warned about.
    await mkdir(join(dirs.projectSkills, 'bad-skill'), { recursive: true });
    await writeFile(join(dirs.projectSkills, 'bad-skill', 'SKILL.md'), '---\nname: bad-skill\ndescription: [unclosed\n---\n# Bad\n');
    // A project skill named like a bundled one shadows it.
    await mkdir(join(dirs.projectSkills, 'compact'), { recursive: true });
    await writeFile(join(dirs.projectSkills, 'compact', 'SKILL.md'), '---\nname: compact\ndescription: The project compacts its own way.\n---\n# Compact\n');
    await mkdir(join(dirs.projectSkills, 'odd-name'), { recursive: true });
    await writeFile(join(dirs.projectSkills, 'odd-name', 'SKILL.md'), '---\nname: Odd_Name\ndescription: Does odd things.\n---\n# Odd\n');
    await mkdir(SCREENSHOTS, { recursive: true });
    await buildConsole(out);
    sys = await startAgentSystem(
      'embedded',
      skillEnv(dirs, { ALFRED_API_KEYS: `${KEY}=acme,${OTHER_KEY}=globex`, ALFRED_CONSOLE_DIR: out, ALFRED_CONFIRM_TIMEOUT_MS: '60000', ALFRED_SKILLS_WATCH: 'false' }),
    );
    api = client(sys.url, { authorization: `Bearer ${KEY}` });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
    await dirs?.remove();
    if (out) await rm(out, { recursive: true, force: true });
  }, 60_000);

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const screen = async (name: string) => {
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name }).click();
    // Locator waits, not waitForFunction: the console's CSP forbids the eval that a string predicate needs.
    await page.locator('main h1', { hasText: name }).waitFor({ state: 'attached' });
  };

  it('should serve the page without a key, with no secret in it and a strict CSP, while the API still needs the key', async () => {
    const res = await fetch(`${sys.url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('<script type="module"');
    expect(html).not.toContain(KEY);
    for (const asset of html.match(/\/console\/assets\/[^"]+/g) ?? []) expect(await readFile(join(out, asset.slice('/console/'.length)), 'utf8')).not.toContain(KEY);
    expect((await client(sys.url).get('/memories')).status).toBe(401);
    expect((await fetch(`${sys.url}/console/assets/nope.js`)).status).toBe(404);
  }, TEST_TIMEOUT);

  it('should refuse a wrong key and sign in with the right one, keeping it in sessionStorage only', async () => {
    await page.goto(`${sys.url}/console/`);
    await shot('login');
    await page.getByLabel('API key').fill('not-the-key-at-all-000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not valid/);

    // By keyboard alone: type the key into the field and submit with Enter.
    await page.getByLabel('API key').fill('');
    await page.getByLabel('API key').focus();
    await page.keyboard.type(KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('search').waitFor();
    // The first Tab reaches the skip link, which moves focus past the navigation to the screen.
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('main');
    const storage: { session: Record<string, string>; local: number; cookie: string; url: string } = await page.evaluate(
      '({ session: { ...sessionStorage }, local: localStorage.length, cookie: document.cookie, url: location.href })',
    );
    expect(Object.values(storage.session)).toContain(KEY);
    expect(storage.local).toBe(0);
    expect(storage.cookie).toBe('');
    expect(storage.url).not.toContain(KEY);
  }, TEST_TIMEOUT);

  it("should find a memory by search and show its score broken into the ranking's signals", async () => {
    for (const content of ['User prefers dark mode in every editor', 'Deploys happen on Tuesdays', 'The cat is called Miso']) {
      expect((await api.post('/memories', { content, tags: ['console'] })).status).toBe(201);
    }
    // Another tenant's memory never shows up in this tenant's console.
    expect((await client(sys.url, { authorization: `Bearer ${OTHER_KEY}` }).post('/memories', { content: 'Globex prefers dark mode too' })).status).toBe(201);
    const expected = (await api.get('/search?q=dark%20mode&explain=true&limit=10')).body.results;

    await page.getByLabel("Search alfred's memories").fill('dark mode');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Search results' }).getByRole('listitem');
    await results.first().waitFor();
    await expect(results.first().textContent()).resolves.toContain('User prefers dark mode in every editor');
    await expect(page.getByRole('list', { name: 'Search results' }).textContent()).resolves.not.toContain('Globex');

    const table = page.getByRole('table', { name: `Score breakdown of ${expected[0].id}` });
    const rows = await table.locator('tbody tr').allTextContents();
    const signals = expected[0].explanation.map((c: { signal: string }) => c.signal);
    expect(signals).toContain('lexical');
    expect(rows.map((r) => signals.find((s: string) => r.startsWith(s)))).toEqual(signals);
    const lexical = expected[0].explanation.find((c: { signal: string }) => c.signal === 'lexical');
    expect(rows.find((r) => r.startsWith('lexical'))).toContain(lexical.contribution.toFixed(4));
    await shot('memory-search');
  }, TEST_TIMEOUT);

  it('should edit, show the history of, and delete a memory only after confirmation', async () => {
    const id = (await api.get('/memories?tag=console&limit=100')).body.memories.find((m: { content: string }) => m.content === 'The cat is called Miso').id as string;
    await page.getByLabel('Tag').fill('console');
    const row = page.locator(`li[data-id="${id}"]`);
    await row.getByRole('button', { name: 'Edit' }).click();
    await row.getByLabel('Content').fill('The cat is called Miso and is grey');
    await row.getByRole('button', { name: 'Save' }).click();
    await row.locator('p.content', { hasText: 'and is grey' }).waitFor();
    expect((await api.get(`/memories/${id}`)).body.content).toBe('The cat is called Miso and is grey');
    await row.getByRole('button', { name: 'History' }).click();
    const history = row.getByRole('list', { name: 'Memory history' });
    await history.filter({ hasText: 'v2 updated' }).waitFor();
    await expect(history.textContent()).resolves.toMatch(/v1 created.*Miso”.*v2 updated.*and is grey/s);
    await shot('memory-browse');

    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Keep it' }).click();
    expect((await api.get(`/memories/${id}`)).status).toBe(200);
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await api.get(`/memories/${id}`)).status).toBe(404);
  }, TEST_TIMEOUT);

  it('should filter by tag and page through the memories', async () => {
    const bulk = Array.from({ length: 23 }, (_, i) => ({ content: `Bulk note number ${i + 1}`, tags: ['bulk'] }));
    expect((await api.post('/memories/batch', { memories: bulk })).status).toBeLessThan(300);
    await page.getByLabel('Tag').fill('bulk');
    await page.getByRole('status').filter({ hasText: '1–20 of 23' }).waitFor();
    await expect(page.getByRole('list', { name: 'Memories' }).getByRole('listitem').count()).resolves.toBe(20);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('status').filter({ hasText: '21–23 of 23' }).waitFor();
    await expect(page.getByRole('list', { name: 'Memories' }).getByRole('listitem').count()).resolves.toBe(3);
    await expect(page.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Tag').fill('');
  }, TEST_TIMEOUT);

  it("should show the agent's level-1 index with the budget's cuts and a broken skill's problem with file, line and field", async () => {
    const code = "export async function execute() { console.log('rolling'); return { success: true, result: 4 }; }";
    expect((await api.post('/executable-skills', { id: 'dice', description: 'Rolls a die', code })).status).toBe(201);
    expect((await api.post('/executable-skills/dice/execute', {})).status).toBe(200);
    await screen('Skills');
    const broken = page.getByRole('list', { name: 'Broken skills' });
    await broken.waitFor();
    const problem = await broken.textContent();
    expect(problem).toMatch(/\/bad-skill\/SKILL\.md:3:\d+ frontmatter \(error\): YAML/);
    const warned = page.getByRole('list', { name: 'Warnings of Odd_Name' });
    await expect(warned.textContent()).resolves.toMatch(/\/odd-name\/SKILL\.md:2 name \(warning\)/);
    await expect(page.getByRole('list', { name: 'Shadowed skills' }).textContent()).resolves.toMatch(/compact at \/skills\/bundled\/compact\/SKILL\.md is shadowed by \/skills\/project\/\.alfred\/compact\/SKILL\.md/);
    await page.getByLabel(/Size budget/).fill('300');
    await expect(page.getByRole('status').filter({ hasText: '(budget 300)' }).textContent()).resolves.toMatch(/[1-9]\d* skill\(s\) dropped: /);
    await page.getByRole('button', { name: 'remember', exact: true }).click();
    await expect(page.getByLabel('Body of remember').textContent()).resolves.toContain('curl');
    await page.getByRole('button', { name: 'dice', exact: true }).click();
    await expect(page.getByLabel('Manifest of dice').textContent()).resolves.toContain('Rolls a die');
    const runs = page.getByRole('table', { name: 'Executions of dice' }).locator('tbody tr');
    await runs.first().waitFor();
    await expect(runs.first().textContent()).resolves.toMatch(/succeeded\d+ msrolling/);
    await shot('skills');
  }, TEST_TIMEOUT);

  it('should run a chat turn over SSE: streaming text, a tool call, a confirmation answered with a button', async () => {
    sys.model.clear();
    sys.model.script(call('activate_skill', { name: 'recall' }), say('Recall is active; your editor is dark.', 150, 5));
    await screen('Chat');
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Message').fill('Which theme do I like?');
    await page.getByRole('button', { name: 'Send' }).click();
    const confirm = page.getByRole('group', { name: 'Confirmation request' });
    await confirm.waitFor();
    await expect(confirm.textContent()).resolves.toContain('recall');
    await expect(page.getByRole('button', { name: 'Cancel turn' }).isEnabled()).resolves.toBe(true);
    await shot('chat-confirmation');
    // Every text the agent's line shows while the turn runs: streamed, it grows piece by piece.
    await page.evaluate(`(() => {
      window.seen = [];
      new MutationObserver(() => {
        const t = [...document.querySelectorAll('[data-testid=assistant-text]')].map((e) => e.textContent).join('|');
        if (t && window.seen[window.seen.length - 1] !== t) window.seen.push(t);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await confirm.getByRole('button', { name: 'Approve' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Turn completed' }).waitFor();
    const seen: string[] = await page.evaluate('window.seen');
    expect(seen.length).toBeGreaterThanOrEqual(3);
    seen.slice(1).forEach((t, i) => expect(t.startsWith(seen[i]!)).toBe(true));
    expect(seen[seen.length - 1]).toBe('Agent: Recall is active; your editor is dark.');
    const transcript = await page.getByRole('list', { name: 'Transcript' }).textContent();
    expect(transcript).toContain('Tool call activate_skill — done');
    expect(transcript).toContain('Recall is active; your editor is dark.');
    expect(sys.model.messageRequests).toHaveLength(2);
    await shot('chat');
  }, TEST_TIMEOUT);

  it('should cancel a running turn from the chat panel', async () => {
    sys.model.clear();
    sys.model.script(call('activate_skill', { name: 'recall' }), say('Never said.'));
    await page.getByLabel('Message').fill('Start and stop.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('group', { name: 'Confirmation request' }).last().getByRole('button', { name: 'Approve' }).waitFor();
    await page.getByRole('button', { name: 'Cancel turn' }).click();
    await page.getByRole('status').filter({ hasText: 'Turn cancelled' }).waitFor();
    expect(await page.getByRole('list', { name: 'Transcript' }).textContent()).not.toContain('Never said.');
  }, TEST_TIMEOUT);

  it("should show agents with their files' versions, and operations from /health and /metrics", async () => {
    // The learner asks the (loopback) model how each observation changes USER.md; each answer makes a version.
    sys.model.clear();
    sys.model.script(
      say(JSON.stringify({ status: 'updated', content: '# USER.md\n\n- Prefers tea over coffee', changes: ['tea'] })),
      say(JSON.stringify({ status: 'updated', content: '# USER.md\n\n- Prefers tea over coffee\n- Works from Lisbon', changes: ['Lisbon'] })),
    );
    for (const observation of ['Prefers tea over coffee', 'Works from Lisbon']) {
      expect((await api.post('/learn', { target: 'user', observation, confidence: 0.9 })).status).toBeLessThan(300);
    }
    const history = (await api.get('/agents/alfred/files/user/history')).body.versions as { version: number }[];
    expect(history.length).toBeGreaterThanOrEqual(2);
    await screen('Agents');
    await page.getByRole('tab', { name: 'USER.md' }).waitFor();
    const content = page.getByLabel('File content');
    await expect(content.textContent()).resolves.toContain('Works from Lisbon');
    const oldest = Math.min(...history.map((v) => v.version));
    await page.getByRole('button', { name: `Restore v${oldest}` }).click();
    await page.getByLabel('File content').filter({ hasNotText: 'Works from Lisbon' }).waitFor();
    const restored = (await api.get('/agents/alfred/files/user')).body.content as string;
    expect(restored).not.toContain('Works from Lisbon');
    await expect(content.textContent()).resolves.toBe(restored);
    await shot('agents');
    await screen('Operations');
    const services = page.getByRole('table', { name: 'Services' });
    await services.waitFor();
    await expect(services.textContent()).resolves.toMatch(/memory\s*up/);
    await expect(page.getByRole('table', { name: 'Requests by route' }).textContent()).resolves.toContain('GET /search');
    await shot('operations');
    expect(pageErrors).toEqual([]);
  }, TEST_TIMEOUT);

  it('should give every control on every screen an accessible name', async () => {
    for (const name of ['Memory', 'Skills', 'Chat', 'Agents', 'Operations']) {
      await screen(name);
      await page.locator('main h2').first().waitFor();
      const unnamed: string[] = await page.evaluate(
        `[...document.querySelectorAll('input, select, textarea, button')].filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.textContent.trim())).map((el) => el.outerHTML)`,
      );
      expect({ screen: name, unnamed }).toEqual({ screen: name, unnamed: [] });
    }
  }, TEST_TIMEOUT);
});
