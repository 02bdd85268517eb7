import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultBundledDir, loadSkillRegistryConfig, projectSkillsDirOf, skillRootsOf } from './config.js';

describe(loadSkillRegistryConfig.name, () => {
  it('should default to the working directory, the home directory, the repo skills folder and watching', () => {
    const config = loadSkillRegistryConfig({});
    expect(config.ALFRED_PROJECT_DIR).toBe(process.cwd());
    expect(config.ALFRED_HOME_DIR).toBe(homedir());
    expect(existsSync(join(config.ALFRED_SKILLS_BUNDLED_DIR, 'remember', 'SKILL.md'))).toBe(true);
    expect(config.ALFRED_SKILLS_BUNDLED_DIR).toBe(defaultBundledDir());
    expect(config).toMatchObject({
      ALFRED_SKILLS_WATCH: true,
      ALFRED_SKILLS_EXTRA_ROOTS: [],
      ALFRED_SKILLS_INDEX_BUDGET: 16_000,
    });
  });

  it('should split extra roots like PATH and parse the switches', () => {
    const config = loadSkillRegistryConfig({
      ALFRED_SKILLS_EXTRA_ROOTS: '/a/skills::/b/skills',
      ALFRED_SKILLS_WATCH: 'false',
      ALFRED_SKILLS_INDEX_BUDGET: '0',
    });
    expect(config).toMatchObject({
      ALFRED_SKILLS_EXTRA_ROOTS: ['/a/skills', '/b/skills'],
      ALFRED_SKILLS_WATCH: false,
      ALFRED_SKILLS_INDEX_BUDGET: 0,
    });
  });

  it('should list every bad variable', () => {
    expect(() => loadSkillRegistryConfig({ ALFRED_SKILLS_WATCH: 'maybe', ALFRED_SKILLS_INDEX_BUDGET: '-3' })).toThrow(
      /ALFRED_SKILLS_WATCH[\s\S]*ALFRED_SKILLS_INDEX_BUDGET|ALFRED_SKILLS_INDEX_BUDGET[\s\S]*ALFRED_SKILLS_WATCH/,
    );
  });
});

describe(skillRootsOf.name, () => {
  it('should order the roots project, global, bundled, extra', () => {
    const config = loadSkillRegistryConfig({
      ALFRED_PROJECT_DIR: '/p',
      ALFRED_HOME_DIR: '/h',
      ALFRED_SKILLS_BUNDLED_DIR: '/b',
      ALFRED_SKILLS_EXTRA_ROOTS: '/x',
    });
    expect(skillRootsOf(config)).toEqual([
      { dir: '/p/.alfred/skills', source: 'project' },
      { dir: '/p/.agents/skills', source: 'project' },
      { dir: '/p/.claude/skills', source: 'project' },
      { dir: '/h/.alfred/skills', source: 'global' },
      { dir: '/h/.agents/skills', source: 'global' },
      { dir: '/b', source: 'bundled' },
      { dir: '/x', source: 'extra' },
    ]);
    expect(projectSkillsDirOf(config)).toBe(resolve('/p/.alfred/skills'));
  });
});
