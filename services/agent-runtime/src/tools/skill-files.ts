import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ErrorCode, SkillRoutes, type SkillSummary } from '#contracts';
import type { Bus } from '#bus';
import { isAlfredError } from '#errors';

/** A file inside a skill's folder, named the way the skill registry serves it. */
export interface SkillFileRef {
  readonly skill: string;
  readonly path: string;
}

/**
 * Whether an absolute path points into a skill folder of the index (the registry's paths): such reads go to the
 * registry over the bus, so they work on any worker without a shared disk.
 */
export function skillFileOf(path: string, skills: readonly SkillSummary[]): SkillFileRef | undefined {
  if (!isAbsolute(path)) return undefined;
  const target = resolve(path);
  for (const s of skills) {
    if (target === resolve(s.location)) return { skill: s.name, path: relative(s.dir, target) || 'SKILL.md' };
    const rel = relative(s.dir, target);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(sep))
      return { skill: s.name, path: rel.split(sep).join('/') };
  }
  return undefined;
}

/** The text of a skill file from the registry: SKILL.md whole (frontmatter and body), any other file as a resource. */
export async function readSkillFile(bus: Bus, tenant: string, ref: SkillFileRef): Promise<string> {
  try {
    const res = await bus.request(SkillRoutes.resource, { tenant, name: ref.skill, path: ref.path });
    if (res.encoding === 'utf8') return res.content;
    return `[binary file, ${res.size} bytes, not shown]`;
  } catch (err) {
    if (!(ref.path === 'SKILL.md' && isAlfredError(err) && err.code === ErrorCode.NotFound)) throw err;
    const skill = await bus.request(SkillRoutes.get, { tenant, name: ref.skill });
    return `---\nname: ${skill.name}\ndescription: ${JSON.stringify(skill.description)}\n---\n${skill.body}`;
  }
}
