import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultRoots, discoverSkills, type SkillRoot } from './skill-discovery.js';
import { writeSkill } from './skill-fixtures.util.js';

describe(discoverSkills.name, () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'alfred-discovery-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const root = (name: string, source: SkillRoot['source'] = 'extra'): SkillRoot => ({ dir: join(tmp, name), source });

  it('should treat a missing root as zero skills', async () => {
    expect(await discoverSkills([root('absent')])).toEqual({ skills: [], shadowed: [], skipped: [], warnings: [] });
  });

  it('should find SKILL.md folders and direct *.md files, but not README.md or resource markdown', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'alpha', 'alpha');
    await writeSkill(r.dir, 'beta.md', 'beta');
    await writeFile(join(r.dir, 'README.md'), '# About these skills\n');
    await writeFile(join(r.dir, 'alpha', 'notes.md'), '---\nname: notes\ndescription: not a skill\n---\n');
    const found = await discoverSkills([r]);
    expect(found.skills.map((s) => [s.name, s.kind])).toEqual([
      ['alpha', 'folder'],
      ['beta', 'file'],
    ]);
    expect(found.skipped).toEqual([]);
  });

  it('should recurse into hidden folders like .curated and .system but skip node_modules and .git', async () => {
    const r = root('a');
    await writeSkill(r.dir, '.curated/one', 'one');
    await writeSkill(r.dir, '.system/two', 'two');
    await writeSkill(r.dir, 'node_modules/pkg/three', 'three');
    await writeSkill(r.dir, '.git/four', 'four');
    const found = await discoverSkills([r]);
    expect(found.skills.map((s) => s.name)).toEqual(['one', 'two']);
  });

  it('should stop at the depth bound and say so', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'a/b/c/shallow', 'shallow');
    await writeSkill(r.dir, 'a/b/c/d/deep', 'deep');
    const found = await discoverSkills([r], { maxDepth: 4 });
    expect(found.skills.map((s) => s.name)).toEqual(['shallow']);
    expect(found.warnings).toEqual([
      expect.objectContaining({ file: join(r.dir, 'a/b/c/d/deep'), message: expect.stringContaining('deeper than 4') }),
    ]);
  });

  it('should let the higher root win and report the shadowed skill', async () => {
    const high = root('project', 'project');
    const low = root('bundled', 'bundled');
    const winner = await writeSkill(high.dir, 'same', 'same', 'Project version.');
    const loser = await writeSkill(low.dir, 'same', 'same', 'Bundled version.');
    await writeSkill(low.dir, 'other', 'other');
    const found = await discoverSkills([high, low]);
    expect(found.skills.map((s) => [s.name, s.source, s.description])).toEqual([
      ['other', 'bundled', 'The other skill.'],
      ['same', 'project', 'Project version.'],
    ]);
    expect(found.shadowed).toEqual([{ name: 'same', path: loser, shadowed_by: winner }]);
  });

  it('should skip unusable skills with a precise reason and load the rest with warnings', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'good', 'good');
    await writeSkill(r.dir, 'mismatch', 'other-name');
    const noDesc = join(r.dir, 'no-desc', 'SKILL.md');
    await mkdir(dirname(noDesc), { recursive: true });
    await writeFile(noDesc, '---\nname: no-desc\n---\nBody\n');
    const noFm = join(r.dir, 'plain', 'SKILL.md');
    await mkdir(dirname(noFm), { recursive: true });
    await writeFile(noFm, '# Just markdown\n');
    const found = await discoverSkills([r]);
    expect(found.skills.map((s) => s.name)).toEqual(['good', 'other-name']);
    expect(found.skills[1].warnings[0]).toMatchObject({
      severity: 'warning',
      field: 'name',
      message: expect.stringContaining('folder name "mismatch"'),
    });
    expect(found.skipped.map((s) => [s.path, s.reason])).toEqual([
      [noDesc, 'description is missing'],
      [noFm, 'no frontmatter: the first line must be --- (line 1)'],
    ]);
  });

  it('should follow a symlinked skill folder inside the root, once, and refuse one pointing outside', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'x/y/z/w/inside', 'inside');
    await symlink(join(r.dir, 'x/y/z/w/inside'), join(r.dir, 'inside'));
    await symlink(join(r.dir, 'x/y/z/w/inside'), join(r.dir, 'x/again'));
    await writeSkill(join(tmp, 'elsewhere'), 'outside', 'outside');
    await symlink(join(tmp, 'elsewhere', 'outside'), join(r.dir, 'outside'));
    const found = await discoverSkills([r]);
    expect(found.skills.map((s) => s.location)).toEqual([join(r.dir, 'inside', 'SKILL.md')]);
    expect(found.shadowed).toEqual([]);
    expect(found.warnings).toEqual([
      expect.objectContaining({ file: join(r.dir, 'outside'), message: expect.stringContaining('outside its root') }),
      expect.objectContaining({
        file: join(r.dir, 'x/y/z/w/inside'),
        message: expect.stringContaining('deeper than 4'),
      }),
    ]);
  });

  it('should give each skill a digest and version that change when any of its files does', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'd', 'd');
    const first = (await discoverSkills([r])).skills[0];
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.version).toBe(first.digest.slice(0, 12));
    expect((await discoverSkills([r])).skills[0].digest).toBe(first.digest);
    await writeFile(join(r.dir, 'd', 'extra.txt'), 'more');
    const second = (await discoverSkills([r])).skills[0];
    expect(second.digest).not.toBe(first.digest);
    await writeFile(join(r.dir, 'd', 'extra.txt'), 'mora');
    expect((await discoverSkills([r])).skills[0].version).not.toBe(second.version);
  });

  it('should keep the body, its first line and its line count', async () => {
    const r = root('a');
    await writeSkill(r.dir, 'b', 'b', 'Desc.', 'one\ntwo\n---\nthree\n');
    const [skill] = (await discoverSkills([r])).skills;
    expect(skill).toMatchObject({ body: 'one\ntwo\n---\nthree\n', body_line: 5, body_lines: 4, dir: join(r.dir, 'b') });
  });
});

describe(defaultRoots.name, () => {
  it('should list roots in precedence order with their source', () => {
    const roots = defaultRoots({ projectDir: '/p', homeDir: '/h', bundledDir: '/repo/skills', extraRoots: ['/x'] });
    expect(roots).toEqual([
      { dir: '/p/.alfred/skills', source: 'project' },
      { dir: '/p/.agents/skills', source: 'project' },
      { dir: '/p/.claude/skills', source: 'project' },
      { dir: '/h/.alfred/skills', source: 'global' },
      { dir: '/h/.agents/skills', source: 'global' },
      { dir: '/repo/skills', source: 'bundled' },
      { dir: '/x', source: 'extra' },
    ]);
  });
});
