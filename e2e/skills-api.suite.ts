import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from '#testing';
import { client, startSystem, type Client, type Mode, type TestSystem } from './harness.js';
import { skillDirs, skillEnv, writeSkillFile, type SkillDirs } from './skills-fixtures.js';

const BUNDLED = ['checkpoint', 'compact', 'distill', 'learn', 'recall', 'remediate', 'remember', 'skills'];

/** The skills API end to end, identical in both ways Alfred runs. */
export function skillsApiSuite(mode: Mode): void {
  describe('with watching off (explicit reload)', () => {
    let system: TestSystem;
    let dirs: SkillDirs;
    let api: Client;

    beforeAll(async () => {
      dirs = await skillDirs({ withProjectSkills: true });
      system = await startSystem(mode, skillEnv(dirs, { ALFRED_SKILLS_WATCH: 'false' }));
      api = client(system.url);
    });
    afterAll(async () => {
      await system?.stop();
      await dirs?.remove();
    });

    describe('GET /skills', () => {
      it('should list bundled and project skills with source, digest, version and warnings', async () => {
        const res = await api.get('/skills');
        expect(res.status).toBe(200);
        const names = res.body.skills.map((s: { name: string }) => s.name);
        expect(names).toEqual(expect.arrayContaining([...BUNDLED, 'proj-tool']));
        const byName = Object.fromEntries(res.body.skills.map((s: { name: string }) => [s.name, s]));
        expect(byName.remember).toMatchObject({
          source: 'bundled',
          warnings: [],
          digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
        expect(byName.remember.version).toBe(byName.remember.digest.slice(0, 12));
        expect(byName['proj-tool']).toMatchObject({
          source: 'project',
          location: '/skills/project/.alfred/proj-tool/SKILL.md',
        });
        expect(byName.recall.source).toBe('project');
        expect(res.body.rendered).toBeUndefined();
      });

      it('should report the shadowed bundled skill and the skipped one with its reason', async () => {
        const res = await api.get('/skills');
        expect(res.body.shadowed).toEqual([
          expect.objectContaining({ name: 'recall', shadowed_by: '/skills/project/.claude/recall/SKILL.md' }),
        ]);
        expect(res.body.skipped).toEqual([
          expect.objectContaining({ path: '/skills/project/.alfred/broken/SKILL.md' }),
        ]);
        expect(res.body.skipped[0].reason).toMatch(/description/);
      });

      it('should show no server path in any reply or error: roots appear as /skills/<source>/…', async () => {
        const replies = await Promise.all([
          api.get('/skills'),
          api.get('/skills?format=xml'),
          api.get('/skills/proj-tool'),
          api.get('/skills/proj-tool/resources'),
          api.get('/skills/search?q=tool'),
          api.get('/skills/recall'),
          api.post('/skills', { name: 'remember', description: 'A second remember.' }),
        ]);
        for (const res of replies) {
          const text = JSON.stringify(res.body);
          expect(text).not.toContain(dirs.project);
          expect(text).not.toContain(system.dataDir);
          expect(text).not.toContain(process.cwd());
        }
        expect(replies[2]!.body).toMatchObject({
          dir: '/skills/project/.alfred/proj-tool',
          root: '/skills/project/.alfred',
        });
        expect(replies[6]!.status).toBe(409);
      });

      it('should render the markdown and XML index for a prompt', async () => {
        const md = await api.get('/skills?format=markdown');
        expect(md.status).toBe(200);
        expect(md.body).toMatchObject({ format: 'markdown', truncated: { shortened: 0, dropped: [] } });
        expect(md.body.text).toMatch(/^## Available skills\n- \*\*checkpoint\*\* — /);
        const xml = await api.get('/skills?format=xml');
        expect(xml.body.text).toMatch(/^<available_skills>\n {2}<skill>\n {4}<name>checkpoint<\/name>/);
        expect(xml.body.text).toContain('<location>/skills/project/.alfred/proj-tool/SKILL.md</location>');
      });

      it('should keep a rendered index within a budget and say what it cut', async () => {
        const res = await api.get('/skills?format=markdown&budget=300');
        expect(res.body.budget).toBe(300);
        expect(res.body.text.length).toBeLessThanOrEqual(300);
        expect(res.body.truncated.shortened + res.body.truncated.dropped.length).toBeGreaterThan(0);
      });

      it.each([['format=yaml'], ['budget=-1'], ['budget=lots'], ['colour=red']])(
        'should refuse ?%s in the error format',
        async (q) => {
          const res = await api.get(`/skills?${q}`);
          expect([400, 422]).toContain(res.status);
          expect(typeof res.body.error.code).toBe('string');
        },
      );
    });

    describe('GET /skills/search', () => {
      it('should rank remember first for a query about remembering preferences, with scores in 0..1', async () => {
        const res = await api.get('/skills/search?q=remember%20preferences');
        expect(res.status).toBe(200);
        expect(res.body.results[0]).toMatchObject({
          name: 'remember',
          source: 'bundled',
          description: expect.stringContaining('Store a fact'),
        });
        for (const r of res.body.results) {
          expect(r.score).toBeGreaterThanOrEqual(0);
          expect(r.score).toBeLessThanOrEqual(1);
        }
        expect(res.body.results.length).toBeLessThanOrEqual(5);
        expect(res.body.query).toBe('remember preferences');
      });

      it('should find a project skill by words of its body and honour limit', async () => {
        const res = await api.get('/skills/search?q=ledger%20invoices&limit=1');
        expect(res.body.results).toHaveLength(1);
        expect(res.body.results[0].name).toBe('proj-tool');
      });

      it.each([
        ['', 'q missing'],
        ['?q=', 'q empty'],
        ['?q=x&limit=51', 'limit above 50'],
        ['?q=x&limit=0', 'limit 0'],
      ])('should refuse %s (%s)', async (query) => {
        const res = await api.get(`/skills/search${query}`);
        expect([400, 422]).toContain(res.status);
        expect(res.body.error).toBeDefined();
      });
    });

    describe('GET /skills/{name}', () => {
      it('should return the body and metadata', async () => {
        const res = await api.get('/skills/remember');
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          name: 'remember',
          license: 'MIT',
          source: 'bundled',
          body_line: expect.any(Number),
        });
        expect(res.body.body).toMatch(/^\n?# Remember/);
      });

      it('should answer an unknown name with 404 and close valid names', async () => {
        const res = await api.get('/skills/remembr');
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
        expect(res.body.error.details.suggestions).toContain('remember');
        expect(res.body.error.message).toContain('remember');
      });

      it('should not take "search" or "reload" for names of other verbs', async () => {
        expect((await api.get('/skills/reload')).status).toBe(404);
        expect((await api.post('/skills/search', {})).status).toBe(404);
      });
    });

    describe('resources', () => {
      it('should list the files beside SKILL.md, text vs binary, without the escaping link', async () => {
        const res = await api.get('/skills/proj-tool/resources');
        expect(res.status).toBe(200);
        expect(res.body.resources).toEqual([
          { path: 'assets/big.txt', size: 8192, kind: 'text' },
          { path: 'assets/logo.bin', size: 7, kind: 'binary' },
          { path: 'references/deep/a b.md', size: 12, kind: 'text' },
          { path: 'references/guide.md', size: 23, kind: 'text' },
        ]);
        expect(res.body.truncated).toBe(false);
      });

      it.each([['references/guide.md'], ['references%2Fguide.md']])(
        'should read %s (the rest of the path, URL-decoded)',
        async (path) => {
          const res = await api.get(`/skills/proj-tool/resources/${path}`);
          expect(res.status).toBe(200);
          expect(res.body).toEqual({
            name: 'proj-tool',
            path: 'references/guide.md',
            size: 23,
            encoding: 'utf8',
            content: '# Guide\n\nLedger rules.\n',
          });
        },
      );

      it('should read a nested file with an encoded space and a binary file as base64', async () => {
        expect((await api.get('/skills/proj-tool/resources/references/deep/a%20b.md')).body.content).toBe(
          'spaced name\n',
        );
        const bin = await api.get('/skills/proj-tool/resources/assets/logo.bin');
        expect(bin.body).toMatchObject({
          encoding: 'base64',
          content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]).toString('base64'),
        });
      });

      it.each([
        ['..%2F..%2F..%2Fsecret.txt'],
        ['..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd'],
        ['%2Fetc%2Fpasswd'],
        ['references%2F..%2F..%2Fbroken%2FSKILL.md'],
        ['a%00b'],
      ])('should refuse the traversal %s with 400 and read nothing', async (path) => {
        const res = await api.get(`/skills/proj-tool/resources/${path}`);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('BAD_REQUEST');
        expect(res.text).not.toContain('top secret');
        expect(res.text).not.toContain('root:');
      });

      it('should refuse a symlink out of the skill folder with 403', async () => {
        const res = await api.get('/skills/proj-tool/resources/escape.txt');
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
        expect(res.text).not.toContain('top secret');
      });

      it('should refuse a file over the size cap with 413 and a missing one with 404', async () => {
        const big = await api.get('/skills/proj-tool/resources/assets/big.txt');
        expect(big.status).toBe(413);
        expect(big.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 4096 } });
        expect((await api.get('/skills/proj-tool/resources/nope.md')).status).toBe(404);
        expect((await api.get('/skills/nope/resources')).body.error.code).toBe('NOT_FOUND');
        expect((await api.get('/skills/nope/resources/a.md')).status).toBe(404);
      });
    });

    describe('POST /skills', () => {
      const good = {
        name: 'weekly-report',
        description: 'Write the weekly status report. Use when the user asks for the weekly report.',
        body: '# Weekly report\n\nGroup the quarterly work by project.\n',
      };

      it("should create a skill of the caller's tenant (201), load it and index it for search", async () => {
        const res = await api.post('/skills', good);
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ name: 'weekly-report', source: 'project', body: good.body });
        // Written into the tenant's own folder, never into the shared, read-only project root.
        const file = join(system.dataDir, 'tenant-skills', 'default', 'weekly-report', 'SKILL.md');
        expect(existsSync(join(dirs.projectSkills, 'weekly-report'))).toBe(false);
        expect(res.body.location).toBe('/skills/tenant/weekly-report/SKILL.md');
        expect(await readFile(file, 'utf8')).toContain('name: weekly-report');
        expect((await api.get('/skills/weekly-report')).status).toBe(200);
        const found = await api.get('/skills/search?q=weekly%20status%20report');
        expect(found.body.results[0].name).toBe('weekly-report');
        // The tenant's own view over the shared roots keeps the registry's limits.
        expect((await api.get('/skills/proj-tool/resources/assets/big.txt')).status).toBe(413);
      });

      it.each([['weekly-report'], ['remember'], ['proj-tool']])(
        'should answer 409 for the existing name %s and change nothing',
        async (name) => {
          const res = await api.post('/skills', { ...good, name });
          expect(res.status).toBe(409);
          expect(res.body.error.code).toBe('CONFLICT');
          expect((await api.get(`/skills/${name}`)).body.description).not.toBe(`${good.description} (dup)`);
        },
      );

      it.each([
        ['an upper-case name', { ...good, name: 'Bad_Name' }],
        ['a double hyphen', { ...good, name: 'bad--name' }],
        ['a description over 1024 characters', { ...good, name: 'long-desc', description: 'x'.repeat(1025) }],
        ['an empty description', { ...good, name: 'empty-desc', description: '' }],
      ])('should refuse %s with 422 and details, writing nothing', async (_what, body) => {
        const res = await api.post('/skills', body);
        expect(res.status).toBe(422);
        expect(res.body.error.code).toBe('VALIDATION_FAILED');
        expect(res.body.error.details).toBeDefined();
        expect(existsSync(join(dirs.projectSkills, body.name))).toBe(false);
      });

      it.each([
        ['an unknown field', { ...good, name: 'extra-field', colour: 'red' }],
        ['a missing description', { name: 'no-desc' }],
        ['a JSON array', [good]],
      ])('should refuse %s with 400', async (_what, body) => {
        const res = await api.post('/skills', body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('BAD_REQUEST');
      });

      it('should refuse a non-JSON body with 415', async () => {
        const res = await api.post('/skills', 'name=x', { 'content-type': 'text/plain' });
        expect(res.status).toBe(415);
      });
    });

    describe('POST /skills/reload', () => {
      it('should pick up added, changed and removed skills and re-index only those', async () => {
        await writeSkillFile(join(dirs.projectSkills, 'hot-one'), 'hot-one', 'Brew espresso with a lever machine.');
        const added = await api.post('/skills/reload');
        expect(added.status).toBe(200);
        expect(added.body).toMatchObject({ added: ['hot-one'], removed: [], changed: [], indexed: 1 });
        expect((await api.get('/skills/search?q=espresso%20lever&limit=1')).body.results[0].name).toBe('hot-one');

        await writeFile(join(dirs.projectSkills, 'hot-one', 'notes.md'), 'grind finer\n');
        const changed = await api.post('/skills/reload');
        expect(changed.body).toMatchObject({ added: [], removed: [], changed: ['hot-one'], indexed: 1 });

        await rm(join(dirs.projectSkills, 'hot-one'), { recursive: true });
        const removed = await api.post('/skills/reload');
        expect(removed.body).toMatchObject({ added: [], removed: ['hot-one'], changed: [], indexed: 0 });
        expect((await api.get('/skills/hot-one')).status).toBe(404);
        const search = await api.get('/skills/search?q=espresso%20lever');
        expect(search.body.results.map((r: { name: string }) => r.name)).not.toContain('hot-one');
      });

      it('should re-index nothing when nothing changed', async () => {
        expect((await api.post('/skills/reload')).body).toMatchObject({
          added: [],
          removed: [],
          changed: [],
          indexed: 0,
        });
      });
    });
  });

  describe('with watching on', () => {
    let system: TestSystem;
    let dirs: SkillDirs;
    let api: Client;

    beforeAll(async () => {
      // No .alfred/skills yet: the registry must notice the folder appearing.
      dirs = await skillDirs({ withProjectSkills: false });
      system = await startSystem(mode, skillEnv(dirs));
      api = client(system.url);
    });
    afterAll(async () => {
      await system?.stop();
      await dirs?.remove();
    });

    it('should serve a skill written into the project while running, without a reload', async () => {
      expect((await api.get('/skills/watched-skill')).status).toBe(404);
      await writeSkillFile(
        join(dirs.projectSkills, 'watched-skill'),
        'watched-skill',
        'Water the office plants on Mondays.',
      );
      await pollUntil(
        async () => (await api.get('/skills/watched-skill')).status === 200,
        10_000,
        'the watched skill to appear',
      );
      await pollUntil(
        async () =>
          (await api.get('/skills/search?q=office%20plants&limit=1')).body.results[0]?.name === 'watched-skill',
        10_000,
        'the watched skill to be searchable',
      );
    });

    it('should follow an edit and a deletion', async () => {
      const before = (await api.get('/skills/watched-skill')).body.version as string;
      await writeSkillFile(
        join(dirs.projectSkills, 'watched-skill'),
        'watched-skill',
        'Water the office plants on Fridays.',
      );
      await pollUntil(async () => (await api.get('/skills/watched-skill')).body.version !== before, 10_000, 'the edit');
      expect((await api.get('/skills/watched-skill')).body.description).toContain('Fridays');
      await rm(join(dirs.projectSkills, 'watched-skill'), { recursive: true });
      await pollUntil(async () => (await api.get('/skills/watched-skill')).status === 404, 10_000, 'the deletion');
    });
  });
}
