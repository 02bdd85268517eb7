import type { SkillBodyResponse } from '#contracts';

/** A discovered skill as the registry holds it: the API's body response plus how it was found. */
export type LoadedSkill = SkillBodyResponse & {
  /** `folder`: <dir>/SKILL.md with resources beside it; `file`: a direct `*.md` in a root, without resources. */
  kind: 'folder' | 'file';
};
