import { resolve } from 'node:path';
import { z } from 'zod';

/** Environment variables of executable skills, spread into the skill-registry's env schema. */
export const executableSkillsEnv = {
  ALFRED_EXEC_SKILLS_DIR: z.string().optional().meta({
    description: 'where executable skills created through the API live',
    shownDefault: '`$ALFRED_DATA_DIR/executable-skills`',
  }),
};

/** What the executable-skills module reads from the registry's config. */
export interface ExecutableSkillsConfig {
  readonly ALFRED_DATA_DIR: string;
  readonly ALFRED_EXEC_SKILLS_DIR?: string | undefined;
  /** The bundled skills folder: its subfolders with a skill.json are bundled (read-only) executable skills. */
  readonly ALFRED_SKILLS_BUNDLED_DIR?: string | undefined;
}

export function managedDirOf(config: ExecutableSkillsConfig): string {
  return resolve(config.ALFRED_EXEC_SKILLS_DIR ?? resolve(config.ALFRED_DATA_DIR, 'executable-skills'));
}
