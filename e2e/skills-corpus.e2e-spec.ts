import { skillsCorpusDir } from '#testing';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, startSystem, type Client, type TestSystem } from './harness.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const corpus = skillsCorpusDir(repoRoot);
const present = existsSync(corpus);
if (!present && process.env.CI === 'true')
  throw new Error(`skills corpus missing at ${corpus} (set ALFRED_SKILLS_CORPUS_DIR)`);
if (!present) console.warn(`[skip] skills corpus e2e: ${corpus} not found`);

(present ? describe : describe.skip)('skills corpus through the API (extra roots)', () => {
  let system: TestSystem;
  let api: Client;
  let empty: string;

  beforeAll(async () => {
    empty = await mkdtemp(join(tmpdir(), 'alfred-corpus-e2e-'));
    const extra = [join(corpus, 'obra-superpowers', 'skills'), join(corpus, 'openai-skills', 'skills')].join(delimiter);
    system = await startSystem('embedded', {
      ALFRED_PROJECT_DIR: empty,
      ALFRED_HOME_DIR: empty,
      ALFRED_SKILLS_EXTRA_ROOTS: extra,
      ALFRED_SKILLS_WATCH: 'false',
    });
    api = client(system.url);
  });
  afterAll(async () => {
    await system?.stop();
    await rm(empty, { recursive: true, force: true });
  });

  it('should list every corpus skill, hidden folders included, with source extra and nothing skipped', async () => {
    const res = await api.get('/skills');
    expect(res.status).toBe(200);
    const extra = res.body.skills.filter((s: { source: string }) => s.source === 'extra');
    expect(extra).toHaveLength(24);
    expect(extra.map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining([
        'brainstorming',
        'writing-skills',
        'gh-fix-ci',
        'create-plan',
        'skill-creator',
        'skill-installer',
      ]),
    );
    expect(res.body.skipped).toEqual([]);
    expect(res.body.shadowed).toEqual([]);
    expect(res.body.warnings).toEqual([]);
  });

  it('should expose the warnings of skills that break a recommendation', async () => {
    const res = await api.get('/skills');
    const byName = Object.fromEntries(res.body.skills.map((s: { name: string }) => [s.name, s]));
    expect(byName['writing-skills'].warnings).toEqual([
      expect.objectContaining({ severity: 'warning', field: 'body', message: expect.stringContaining('679 lines') }),
    ]);
    expect(byName['subagent-driven-development'].warnings).toEqual([
      expect.objectContaining({ field: 'body', message: expect.stringContaining('503 lines') }),
    ]);
    expect(byName.brainstorming.warnings).toEqual([]);
    expect(byName['skill-creator'].metadata).toEqual({ 'short-description': 'Create or update a skill' });
  });

  it('should serve a corpus body and its resources, and find it by search', async () => {
    const creator = await api.get('/skills/skill-creator');
    expect(creator.status).toBe(200);
    // The second extra root, named by its place in the configuration, never by the server's folder.
    expect(creator.body.location).toBe('/skills/extra-2/.system/skill-creator/SKILL.md');
    const resources = await api.get('/skills/skill-creator/resources');
    expect(resources.body.resources.length).toBeGreaterThan(0);
    const first = resources.body.resources.find((r: { kind: string }) => r.kind === 'text');
    const file = await api.get(
      `/skills/skill-creator/resources/${first.path.split('/').map(encodeURIComponent).join('/')}`,
    );
    expect(file.status).toBe(200);
    const hits = await api.get('/skills/search?q=systematic%20debugging%20root%20cause&limit=3');
    expect(hits.body.results[0].name).toBe('systematic-debugging');
  });

  it('should render the whole index within the default budget', async () => {
    const res = await api.get('/skills?format=xml');
    expect(res.body.budget).toBe(16_000);
    expect(res.body.text.length).toBeLessThanOrEqual(16_000);
    expect(res.body.text).toContain('<name>brainstorming</name>');
  });
});
