import { z } from 'zod';

/** Agent Skills name rule: 1-64 lowercase letters, digits and single inner hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_COMPATIBILITY_MAX = 500;
/** Frontmatter keys the Agent Skills specification defines; any other key is a violation. */
export const SKILL_ALLOWED_KEYS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;

export const SkillName = z
  .string()
  .min(1)
  .max(SKILL_NAME_MAX)
  .regex(SKILL_NAME_PATTERN, 'skill names are 1-64 lowercase letters, digits and single hyphens');

/** Where a skill root sits in the precedence order. */
export const SkillSource = z.enum(['project', 'global', 'bundled', 'extra']);
export type SkillSource = z.infer<typeof SkillSource>;

export const SkillProblemSeverity = z.enum(['error', 'warning']);
export type SkillProblemSeverity = z.infer<typeof SkillProblemSeverity>;

/** One finding about one skill file; line is 1-based in the file itself. */
export const SkillProblem = z.object({
  severity: SkillProblemSeverity,
  field: z.string(),
  message: z.string(),
  line: z.number().int().min(1).optional(),
  column: z.number().int().min(1).optional(),
  file: z.string(),
});
export type SkillProblem = z.infer<typeof SkillProblem>;

/** A level-1 index entry: what every agent sees about a skill, plus where it came from. */
export const SkillSummary = z.object({
  name: z.string(),
  description: z.string(),
  source: SkillSource,
  root: z.string(),
  dir: z.string(),
  location: z.string(),
  digest: z.string(),
  version: z.string(),
  license: z.string().optional(),
  compatibility: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  allowed_tools: z.array(z.string()).optional(),
  body_lines: z.number().int().min(0),
  warnings: z.array(SkillProblem),
});
export type SkillSummary = z.infer<typeof SkillSummary>;

/** A skill that lost to a same-named skill in a higher-precedence root. */
export const ShadowedSkill = z.object({ name: z.string(), path: z.string(), shadowed_by: z.string() });
export type ShadowedSkill = z.infer<typeof ShadowedSkill>;

/** A SKILL.md that was found but not loaded, with the reason. */
export const SkippedSkill = z.object({ path: z.string(), reason: z.string(), problems: z.array(SkillProblem) });
export type SkippedSkill = z.infer<typeof SkippedSkill>;

/** GET /skills */
export const SkillIndexResponse = z.object({
  skills: z.array(SkillSummary),
  shadowed: z.array(ShadowedSkill),
  skipped: z.array(SkippedSkill),
});
export type SkillIndexResponse = z.infer<typeof SkillIndexResponse>;

/** GET /skills/{name}: the level-2 body below the frontmatter and the skill's metadata. */
export const SkillBodyResponse = SkillSummary.extend({
  body: z.string(),
  body_line: z.number().int().min(1),
});
export type SkillBodyResponse = z.infer<typeof SkillBodyResponse>;

export const SkillResourceEntry = z.object({
  path: z.string(),
  size: z.number().int().min(0),
  kind: z.enum(['text', 'binary']),
});
export type SkillResourceEntry = z.infer<typeof SkillResourceEntry>;

/** GET /skills/{name}/resources */
export const SkillResourceList = z.object({
  name: z.string(),
  resources: z.array(SkillResourceEntry),
  truncated: z.boolean(),
});
export type SkillResourceList = z.infer<typeof SkillResourceList>;

/** GET /skills/{name}/resources/{path}: text as utf8, anything else base64. */
export const SkillResourceContent = z.object({
  name: z.string(),
  path: z.string(),
  size: z.number().int().min(0),
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});
export type SkillResourceContent = z.infer<typeof SkillResourceContent>;

/** One skill's verdict from `alfred skills validate` (one JSON line per skill). */
export const SkillValidationReport = z.object({
  skill: z.string().nullable(),
  path: z.string(),
  valid: z.boolean(),
  errors: z.array(SkillProblem),
  warnings: z.array(SkillProblem),
});
export type SkillValidationReport = z.infer<typeof SkillValidationReport>;

/** POST /skills: a new SKILL.md skill in the project root; validated strictly before anything is written. */
export const SkillCreateBody = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().min(1).max(10_000),
  body: z.string().max(1_000_000).default(''),
  license: z.string().max(200).optional(),
  compatibility: z.string().max(10_000).optional(),
  metadata: z.record(z.string(), z.string()).optional(),
});
export type SkillCreateBody = z.infer<typeof SkillCreateBody>;

/** What a reload changed, by skill name. */
export const SkillChanges = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
});
export type SkillChanges = z.infer<typeof SkillChanges>;
