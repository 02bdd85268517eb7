import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SkillRoutes } from '#contracts';
import { InProcessBus } from '#bus';
import { createLogger } from '#logging';
import { hostService, type HostedService } from '#runtime';
import { loadSkillRegistryConfig } from '../config.js';
import { skillRegistryService } from '../skill-registry.module.js';
import { SkillRegistryHandlers } from './skill-registry.handlers.js';

const logger = createLogger({ service: 'test', level: 'silent' });

describe(SkillRegistryHandlers.name, () => {
  let tmp: string;
  let bus: InProcessBus;
  let hosted: HostedService;

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-skill-handlers-'));
    const skill = join(tmp, 'project', '.alfred', 'skills', 'local-tool');
    await mkdir(join(skill, 'docs'), { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), '---\nname: local-tool\ndescription: A local tool.\n---\n# Local\n');
    await writeFile(join(skill, 'docs', 'a.md'), 'doc a\n');
    await writeFile(join(tmp, 'outside.txt'), 'outside\n');
    await symlink(join(tmp, 'outside.txt'), join(skill, 'link.txt'));
    const config = loadSkillRegistryConfig({
      ALFRED_DATA_DIR: join(tmp, 'data'),
      ALFRED_EMBEDDER: 'hash',
      ALFRED_PROJECT_DIR: join(tmp, 'project'),
      ALFRED_HOME_DIR: join(tmp, 'home'),
      ALFRED_SKILLS_WATCH: 'false',
    });
    bus = new InProcessBus({ dataDir: join(tmp, 'bus'), logger });
    hosted = await hostService(skillRegistryService, config, {
      service: 'skill-registry',
      instance: 'test',
      bus,
      logger,
    });
  });
  afterAll(async () => {
    await hosted?.stop();
    await bus?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  describe('register', () => {
    it('should answer the index with the project skill before the bundled ones in precedence', async () => {
      const index = await bus.request(SkillRoutes.index, { tenant: 't' });
      expect(index.skills.find((s) => s.name === 'local-tool')?.source).toBe('project');
      expect(index.skills.find((s) => s.name === 'remember')?.source).toBe('bundled');
      expect(index.rendered.markdown.text).toContain('- **local-tool** — A local tool.');
      expect(index.budget).toBe(16_000);
    });

    it('should carry NOT_FOUND with suggestions across the bus', async () => {
      await expect(bus.request(SkillRoutes.get, { tenant: 't', name: 'local-tol' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
        details: { name: 'local-tol', suggestions: ['local-tool'] },
      });
    });

    it('should serve level 3 with containment errors as codes', async () => {
      expect(
        (await bus.request(SkillRoutes.resources, { tenant: 't', name: 'local-tool' })).resources.map((r) => r.path),
      ).toEqual(['docs/a.md']);
      expect(
        (await bus.request(SkillRoutes.resource, { tenant: 't', name: 'local-tool', path: 'docs/a.md' })).content,
      ).toBe('doc a\n');
      await expect(
        bus.request(SkillRoutes.resource, { tenant: 't', name: 'local-tool', path: '../../outside.txt' }),
      ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(
        bus.request(SkillRoutes.resource, { tenant: 't', name: 'local-tool', path: 'link.txt' }),
      ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    });

    it('should search, create and reload', async () => {
      const hits = await bus.request(SkillRoutes.search, { tenant: 't', query: { q: 'remember preferences' } });
      expect(hits.results[0]?.name).toBe('remember');
      const created = await bus.request(SkillRoutes.create, {
        tenant: 't',
        skill: { name: 'made-here', description: 'Made over the bus.' },
      });
      expect(created.location).toBe('/skills/tenant/made-here/SKILL.md');
      expect(existsSync(join(tmp, 'data', 'tenant-skills', 't', 'made-here', 'SKILL.md'))).toBe(true);
      await expect(
        bus.request(SkillRoutes.create, { tenant: 't', skill: { name: 'Nope', description: 'x' } }),
      ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(await bus.request(SkillRoutes.reload, { tenant: 't' })).toMatchObject({
        added: [],
        removed: [],
        changed: [],
        indexed: 0,
        skills: 10,
      });
    });

    it('should report ready once its search collection exists', async () => {
      // With REDIS_URL set (as under CI) readiness lists redis too.
      expect(await hosted.ready()).toMatchObject({ ready: true, checks: { bus: true, 'vector-store': true } });
    });
  });
});
