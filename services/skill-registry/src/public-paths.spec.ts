import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
import { PublicPaths } from './public-paths.js';

describe('PublicPaths', () => {
  const paths = PublicPaths.of(
    [
      { dir: '/srv/app/.alfred/skills', source: 'project' },
      { dir: '/srv/app/.claude/skills', source: 'project' },
      { dir: '/opt/alfred/skills', source: 'bundled' },
      { dir: '/mnt/a', source: 'extra' },
      { dir: '/mnt/b', source: 'extra' },
    ],
    '/var/data/tenant-skills/acme',
  );

  it('should name every root by source (and tool folder) instead of its server path', () => {
    expect(paths.text('/srv/app/.alfred/skills/x/SKILL.md')).toBe('/skills/project/.alfred/x/SKILL.md');
    expect(paths.text('/srv/app/.claude/skills/x/SKILL.md')).toBe('/skills/project/.claude/x/SKILL.md');
    expect(paths.text('/opt/alfred/skills/remember')).toBe('/skills/bundled/remember');
    expect(paths.text('/mnt/b/y/SKILL.md')).toBe('/skills/extra-2/y/SKILL.md');
    expect(paths.text('/var/data/tenant-skills/acme/mine/SKILL.md')).toBe('/skills/tenant/mine/SKILL.md');
    expect(paths.text('/opt/alfred/skills')).toBe('/skills/bundled');
  });

  it('should rewrite paths inside texts and leave look-alike prefixes alone', () => {
    expect(paths.text('skill x already exists at /opt/alfred/skills/x/SKILL.md')).toBe(
      'skill x already exists at /skills/bundled/x/SKILL.md',
    );
    expect(paths.text('<location>/mnt/a/z/SKILL.md</location>')).toBe('<location>/skills/extra/z/SKILL.md</location>');
    expect(paths.text('/opt/alfred/skills-old/x')).toBe('/opt/alfred/skills-old/x');
  });

  it('should rewrite every string of a reply, nested', () => {
    const reply = {
      skills: [{ dir: '/opt/alfred/skills/r', warnings: [{ file: '/opt/alfred/skills/r/SKILL.md' }], body_lines: 3 }],
      budget: null,
    };
    expect(paths.value(reply)).toEqual({
      skills: [{ dir: '/skills/bundled/r', warnings: [{ file: '/skills/bundled/r/SKILL.md' }], body_lines: 3 }],
      budget: null,
    });
  });

  it("should rewrite an error's message and details and keep its code", async () => {
    const failing = paths.expose(() => {
      throw new AlfredError(ErrorCode.Conflict, 'exists at /opt/alfred/skills/x/SKILL.md', {
        path: '/opt/alfred/skills/x/SKILL.md',
      });
    });
    await expect(failing).rejects.toMatchObject({
      code: ErrorCode.Conflict,
      message: 'exists at /skills/bundled/x/SKILL.md',
      details: { path: '/skills/bundled/x/SKILL.md' },
    });
  });
});
