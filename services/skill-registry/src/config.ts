import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { baseEnv, contentSafetyEnv, embeddingEnv, envHelpers, parseEnv } from '#config';
import { defaultRoots, type SkillRoot } from '#skills';
import { executableSkillsEnv } from './executable/executable-skills.config.js';
import { skillInstallEnv } from './install/install.config.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The repo's `skills/` folder: three levels up from src (jest, tsx), four from dist. */
export function defaultBundledDir(): string {
  const candidates = [resolve(here, '..', '..', '..', 'skills'), resolve(here, '..', '..', '..', '..', 'skills')];
  return candidates.find((dir) => existsSync(resolve(dir, 'skills', 'SKILL.md'))) ?? candidates[0]!;
}

/** A list of folders separated like PATH (`:` on POSIX); empty entries are ignored. */
const pathList = z.string().transform((raw) =>
  raw
    .split(delimiter)
    .map((p) => p.trim())
    .filter(Boolean),
);

export const skillRegistryEnvSchema = z.object({
  ...baseEnv,
  ...embeddingEnv,
  ...executableSkillsEnv,
  ...skillInstallEnv,
  ...contentSafetyEnv,
  ALFRED_PROJECT_DIR: z
    .string()
    .default(() => process.cwd())
    .meta({
      description:
        'the project whose `.alfred/skills`, `.agents/skills` and `.claude/skills` are the highest-precedence ' +
        'skill roots',
      shownDefault: 'the working directory',
    }),
  ALFRED_HOME_DIR: z
    .string()
    .default(() => homedir())
    .meta({
      description: 'where the global roots `~/.alfred/skills` and `~/.agents/skills` are looked for',
      shownDefault: 'the home directory',
    }),
  ALFRED_SKILLS_BUNDLED_DIR: z
    .string()
    .default(defaultBundledDir)
    .meta({ description: 'the bundled skills', shownDefault: "the package's `skills/`" }),
  ALFRED_SKILLS_EXTRA_ROOTS: pathList.default([]).describe('more skill roots, lowest precedence, separated like PATH'),
  ALFRED_SKILLS_INDEX_BUDGET: z.coerce
    .number()
    .int()
    .min(0)
    .default(16_000)
    .describe('largest rendered skill index in characters (descriptions are shortened first); 0: no budget'),
  ALFRED_SKILLS_WATCH: envHelpers.bool
    .default(true)
    .describe('watch the skill roots and pick up changes without `POST /skills/reload`'),
  ALFRED_SKILLS_RESOURCE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024)
    .describe('largest skill resource file served'),
});
export type SkillRegistryConfig = z.output<typeof skillRegistryEnvSchema>;

export function loadSkillRegistryConfig(env: NodeJS.ProcessEnv): SkillRegistryConfig {
  return parseEnv(skillRegistryEnvSchema, env);
}

/** Roots in precedence order: project, global, bundled, extra. */
export function skillRootsOf(config: SkillRegistryConfig): SkillRoot[] {
  return defaultRoots({
    projectDir: resolve(config.ALFRED_PROJECT_DIR),
    homeDir: resolve(config.ALFRED_HOME_DIR),
    bundledDir: resolve(config.ALFRED_SKILLS_BUNDLED_DIR),
    extraRoots: config.ALFRED_SKILLS_EXTRA_ROOTS,
  });
}

/** Where POST /skills writes: the project's `.alfred/skills`. */
export function projectSkillsDirOf(config: SkillRegistryConfig): string {
  return resolve(config.ALFRED_PROJECT_DIR, '.alfred', 'skills');
}
