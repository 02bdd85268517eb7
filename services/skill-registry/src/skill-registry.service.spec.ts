import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvCounters } from '#bus';
import { HashingEmbedder, type Embedder } from '#embeddings';
import { FileKvStore } from '#files';
import { SkillCatalog, type SkillRoot } from '#skills';
import { LanceDbStore } from '#vector-store';
import { defaultBundledDir } from './config.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { openSkillCollection, SkillSearchRepository } from './skill-search.repository.js';
import { SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';

async function writeSkill(root: string, name: string, description: string): Promise<void> {
  await mkdir(join(root, name), { recursive: true });
  await writeFile(join(root, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`);
}

/** The real hashing embedder, counting how many texts it was asked to embed. */
class CountingEmbedder implements Embedder {
  texts = 0;
  constructor(private readonly inner: Embedder) {}
  get id() {
    return this.inner.id;
  }
  get dimension() {
    return this.inner.dimension;
  }
  get kind() {
    return this.inner.kind;
  }
  embed(texts: readonly string[]) {
    this.texts += texts.length;
    return this.inner.embed(texts);
  }
}

describe(SkillRegistryService.name, () => {
  let tmp: string;
  let store: LanceDbStore;
  let project: SkillRoot;
  const services: SkillRegistryService[] = [];

  const start = async (embedder: Embedder, options: { budget?: number; outcomes?: SkillOutcomeRepository } = {}) => {
    const roots = [project, { dir: defaultBundledDir(), source: 'bundled' as const }];
    const repo = new SkillSearchRepository(await openSkillCollection(store, embedder.id, embedder.dimension));
    const service = new SkillRegistryService(new SkillCatalog({ roots }), repo, embedder, {
      projectSkillsDir: project.dir,
      outcomes: options.outcomes ?? new SkillOutcomeRepository(new KvCounters(new FileKvStore(join(tmp, 'kv')))),
      ...(options.budget !== undefined ? { indexBudget: options.budget } : {}),
    });
    services.push(service);
    await service.start(false);
    return service;
  };

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-skill-registry-'));
    store = new LanceDbStore({ dir: join(tmp, 'vectors') });
    project = { dir: join(tmp, 'project', '.alfred', 'skills'), source: 'project' };
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.close();
    await store.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe('outcomes', () => {
    const query = { q: 'deploy the web app to production', limit: 5, min_score: 0 };
    const order = async (service: SkillRegistryService) =>
      (await service.searchSkills('t', query)).results.map((r) => r.name).filter((n) => n.startsWith('ship-'));
    const record = async (service: SkillRegistryService, name: string, success: boolean, times: number) => {
      for (let i = 0; i < times; i++) await service.feedback('t', name, { success, by: 'user' });
    };

    beforeEach(async () => {
      // Both match the query; the flaky one a little better (its description repeats the query's words).
      await writeSkill(
        project.dir,
        'ship-flaky',
        'Deploy the web app to production. Use to deploy the web app to production servers.',
      );
      await writeSkill(
        project.dir,
        'ship-steady',
        'Deploy the web app to production servers with a health check. Use when releasing.',
      );
    });

    it('should let a reliable skill pass an equally relevant unreliable one after enough outcomes only', async () => {
      const service = await start(new HashingEmbedder({ dimension: 64 }));
      expect(await order(service)).toEqual(['ship-flaky', 'ship-steady']);
      await record(service, 'ship-steady', true, 1);
      await record(service, 'ship-flaky', false, 1);
      expect(await order(service)).toEqual(['ship-flaky', 'ship-steady']);
      await record(service, 'ship-steady', true, 9);
      await record(service, 'ship-flaky', false, 9);
      expect(await order(service)).toEqual(['ship-steady', 'ship-flaky']);
      const steady = await service.get('t', 'ship-steady');
      expect(steady.outcomes).toEqual({ success: 10, failure: 0, estimate: 0.813 });
      expect((await service.get('t', 'ship-flaky')).outcomes).toEqual({ success: 0, failure: 10, estimate: 0.188 });
    });

    it('should drop the unreliable skill first under a budget, and list the reliable one first', async () => {
      const service = await start(new HashingEmbedder({ dimension: 64 }));
      await record(service, 'ship-flaky', false, 5);
      await record(service, 'ship-steady', true, 5);
      const full = await service.index('t');
      expect(full.rendered.markdown.text.indexOf('ship-steady')).toBeLessThan(
        full.rendered.markdown.text.indexOf('ship-flaky'),
      );
      // The largest budget that drops one of the two: it is the unreliable one (alphabetically it would be
      // ship-steady).
      let budget = full.rendered.markdown.text.length;
      let rendered = full.rendered.markdown;
      while (!rendered.truncated.dropped.some((n) => n.startsWith('ship-')) && budget > 0) {
        budget -= 20;
        rendered = (await service.index('t', budget)).rendered.markdown;
      }
      expect(rendered.truncated.dropped).toContain('ship-flaky');
      expect(rendered.truncated.dropped).not.toContain('ship-steady');
      expect(rendered.text).toContain('ship-steady');
    });

    it("should count an executable skill's runs under its id and for SKILL.md skills offering its tool", async () => {
      await mkdir(join(project.dir, 'ship-release'), { recursive: true });
      await writeFile(
        join(project.dir, 'ship-release', 'SKILL.md'),
        '---\nname: ship-release\ndescription: Release the web app\nallowed-tools: skill_ship_steady ' +
          'Read\n---\n# ship\n',
      );
      const service = await start(new HashingEmbedder({ dimension: 64 }));
      expect(await service.executed('t', 'ship-steady', true)).toMatchObject({
        counted: ['ship-steady', 'ship-release'],
        outcomes: { success: 1, failure: 0 },
      });
      await service.executed('t', 'ship-steady', false);
      expect((await service.get('t', 'ship-steady')).outcomes).toEqual({ success: 1, failure: 1, estimate: 0.5 });
      expect((await service.get('t', 'ship-release')).outcomes).toEqual({ success: 1, failure: 1, estimate: 0.5 });
      expect((await service.get('other', 'ship-steady')).outcomes).toBeUndefined();
      // An executable skill without a SKILL.md of its name is counted too (shown on its own reads).
      expect((await service.executed('t', 'no-markdown', false)).counted).toEqual(['no-markdown']);
    });

    it('should count each of many concurrent outcomes, writing those arriving during a write together', async () => {
      class CountedWrites extends SkillOutcomeRepository {
        writes = 0;
        override add(...args: Parameters<SkillOutcomeRepository['add']>) {
          this.writes++;
          return super.add(...args);
        }
      }
      const outcomes = new CountedWrites(new KvCounters(new FileKvStore(join(tmp, 'kv'))));
      const service = await start(new HashingEmbedder({ dimension: 64 }), { outcomes });
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => service.executed('t', 'ship-steady', i % 4 !== 0)),
      );
      expect((await service.get('t', 'ship-steady')).outcomes).toMatchObject({ success: 30, failure: 10 });
      // Each answer holds at least its own outcome; the last write's answer holds them all.
      expect(answers.every((a) => a.outcomes.success + a.outcomes.failure >= 1)).toBe(true);
      expect(answers.some((a) => a.outcomes.success + a.outcomes.failure === 40)).toBe(true);
      // Arriving together, they wait for at most the write in flight: a few writes, not forty.
      expect(outcomes.writes).toBeLessThan(40);
      expect(outcomes.writes).toBeGreaterThanOrEqual(1);
    });

    it('should refuse feedback for an unknown skill', async () => {
      const service = await start(new HashingEmbedder({ dimension: 64 }));
      await expect(service.feedback('t', 'no-such-skill', { success: true, by: 'user' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    });
  });

  describe('searchSkills', () => {
    it.each([
      ['remember preferences', 'remember'],
      ['search my memory for what the user said before', 'recall'],
      ['summarise the long conversation to free context', 'compact'],
      ['find and load another skill', 'skills'],
      ['update USER.md with an observation', 'learn'],
    ])('should rank for "%s" the %s skill first, with scores in 0..1', async (q, expected) => {
      const service = await start(new HashingEmbedder());
      const res = await service.searchSkills('t', { q, limit: 5, min_score: 0 });
      expect(res.results[0]?.name).toBe(expected);
      expect(res.results.length).toBeLessThanOrEqual(5);
      for (const r of res.results) {
        expect(r.score).toBeGreaterThanOrEqual(0);
        expect(r.score).toBeLessThanOrEqual(1);
      }
      expect(res.results[0]).toMatchObject({ source: 'bundled', version: expect.stringMatching(/^[0-9a-f]{12}$/) });
    });

    it('should drop results under min_score', async () => {
      const service = await start(new HashingEmbedder());
      const res = await service.searchSkills('t', { q: 'remember preferences', limit: 50, min_score: 0.99 });
      expect(res.results.every((r) => r.score >= 0.99)).toBe(true);
    });
  });

  describe('sync', () => {
    it('should embed every skill once, then only the skills whose digest changed', async () => {
      const embedder = new CountingEmbedder(new HashingEmbedder({ dimension: 64 }));
      const service = await start(embedder);
      expect(embedder.texts).toBe(8);
      expect(await service.reload('t')).toMatchObject({ added: [], changed: [], removed: [], indexed: 0 });
      expect(embedder.texts).toBe(8);
      await writeSkill(project.dir, 'fresh', 'Tune the espresso grinder.');
      expect(await service.reload('t')).toMatchObject({ added: ['fresh'], indexed: 1, skills: 9 });
      await writeFile(join(project.dir, 'fresh', 'notes.md'), 'finer\n');
      expect(await service.reload('t')).toMatchObject({ changed: ['fresh'], indexed: 1 });
      expect(embedder.texts).toBe(10);
      await rm(join(project.dir, 'fresh'), { recursive: true });
      expect(await service.reload('t')).toMatchObject({ removed: ['fresh'], indexed: 0 });
      expect(
        (await service.searchSkills('t', { q: 'espresso grinder', limit: 50, min_score: 0 })).results.map(
          (r) => r.name,
        ),
      ).not.toContain('fresh');
    });

    it('should re-embed nothing after a restart over the same store', async () => {
      await start(new HashingEmbedder({ dimension: 64 }));
      await services.pop()!.close();
      const again = new CountingEmbedder(new HashingEmbedder({ dimension: 64 }));
      const service = await start(again);
      expect(again.texts).toBe(0);
      expect(
        (await service.searchSkills('t', { q: 'remember preferences', limit: 1, min_score: 0 })).results[0]?.name,
      ).toBe('remember');
    });

    it('should rebuild the index for another embedder instead of refusing', async () => {
      await start(new HashingEmbedder({ dimension: 64 }));
      await services.pop()!.close();
      const other = new CountingEmbedder(new HashingEmbedder({ dimension: 128 }));
      await start(other);
      expect(other.texts).toBe(8);
    });
  });

  describe('create', () => {
    it("should write the skill into the tenant's own root and make it searchable for that tenant", async () => {
      const service = await start(new HashingEmbedder());
      const body = await service.create('t', {
        name: 'plant-care',
        description: 'Water the office plants. Use on Mondays.',
        body: '# Plants\n',
      });
      expect(body).toMatchObject({
        name: 'plant-care',
        source: 'project',
        location: join(project.dir, '..', 'tenant-skills', 't', 'plant-care', 'SKILL.md'),
      });
      expect(
        (await service.searchSkills('t', { q: 'water office plants', limit: 1, min_score: 0 })).results[0]?.name,
      ).toBe('plant-care');
      await expect(service.create('t', { name: 'plant-care', description: 'Again.', body: '' })).rejects.toMatchObject({
        code: 'CONFLICT',
      });
      await expect(
        service.create('t', { name: 'remember', description: 'Shadow a shared one.', body: '' }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it("should keep a tenant's skill out of every other tenant's index, reads and searches", async () => {
      const service = await start(new HashingEmbedder());
      await service.create('t', {
        name: 'plant-care',
        description: 'Water the office plants. Use on Mondays.',
        body: '# Plants\n',
      });
      expect((await service.index('t')).skills.map((s) => s.name)).toContain('plant-care');
      expect((await service.index('other')).skills.map((s) => s.name)).not.toContain('plant-care');
      expect((await service.index('other')).rendered.markdown.text).not.toContain('plant-care');
      await expect(service.get('other', 'plant-care')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(service.resources('other', 'plant-care')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const found = await service.searchSkills('other', { q: 'water office plants', limit: 50, min_score: 0 });
      expect(found.results.map((r) => r.name)).not.toContain('plant-care');
      // The other tenant may create its own skill of that name: a separate skill, not a view of the first.
      await service.create('other', {
        name: 'plant-care',
        description: 'Their plants. Use on Fridays.',
        body: '# Theirs\n',
      });
      expect((await service.get('t', 'plant-care')).description).toMatch(/Mondays/);
      expect((await service.get('other', 'plant-care')).description).toMatch(/Fridays/);
    });
  });

  describe('index', () => {
    it('should give the JSON index with both renderings under the configured budget', async () => {
      const service = await start(new HashingEmbedder(), { budget: 400 });
      const index = await service.index('t');
      expect(index.skills.map((s) => s.name)).toEqual([
        'checkpoint',
        'compact',
        'distill',
        'learn',
        'recall',
        'remediate',
        'remember',
        'skills',
      ]);
      expect(index.budget).toBe(400);
      expect(index.rendered.markdown.text.length).toBeLessThanOrEqual(400);
      expect(index.rendered.xml.text.length).toBeLessThanOrEqual(400);
      expect(index.rendered.xml.truncated.dropped.length).toBeGreaterThan(0);
      expect((await service.index('t', 0)).rendered.markdown.text).toBe('');
      expect((await service.index('t', 1_000_000)).rendered.markdown.truncated).toEqual({ shortened: 0, dropped: [] });
    });

    it('should render without a budget when it is 0', async () => {
      const service = await start(new HashingEmbedder(), { budget: 0 });
      expect((await service.index('t')).budget).toBeNull();
      expect((await service.index('t')).rendered.markdown.truncated).toEqual({ shortened: 0, dropped: [] });
    });
  });
});
