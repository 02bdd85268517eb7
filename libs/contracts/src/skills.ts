import { z } from 'zod';
import { NamePatterns, TenantId } from './common.js';
import { Provenance, ScopedWriter, WriterFilter, WriterQuery } from './provenance.js';
import { route, ServiceName } from './route.js';
import { InstalledFrom } from './skill-origin.js';

/** Agent Skills name rule: 1-64 lowercase letters, digits and single inner hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
export const SKILL_COMPATIBILITY_MAX = 500;
/** Frontmatter keys the Agent Skills specification defines; any other key is a violation. */
export const SKILL_ALLOWED_KEYS = [
  'name',
  'description',
  'license',
  'compatibility',
  'metadata',
  'allowed-tools',
] as const;

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
  /** Who wrote a skill created at run time (additional field; absent on skills from the file system). */
  provenance: Provenance.optional(),
  /** Where a skill installed from git came from, pinned to its commit (additional field). */
  installed_from: InstalledFrom.optional(),
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
/**
 * What a skill achieved: successes and failures recorded from its uses (feedback, executions, turns after
 * load_skill), and the smoothed success estimate `(success + a) / (success + failure + a + b)` with the
 * registry's prior, which is what skill search and the level-1 index order use.
 */
export const SkillOutcomes = z.object({
  success: z.number().int().min(0),
  failure: z.number().int().min(0),
  estimate: z.number().min(0).max(1),
});
export type SkillOutcomes = z.infer<typeof SkillOutcomes>;

/** POST /skills/{name}/feedback: whether one use of the skill achieved what it was used for. */
export const SkillFeedbackBody = z.strictObject({
  success: z.boolean({ error: 'success must be true or false' }),
  /**
   * Who judged it: the user (default), the agent itself, the turn that loaded it (completed or failed), or an
   * execution.
   */
  by: z.enum(['user', 'agent', 'turn', 'execution']).default('user'),
  note: z.string().trim().max(1000).optional(),
});
export type SkillFeedbackBody = z.infer<typeof SkillFeedbackBody>;

export const SkillFeedbackResult = z.object({ name: z.string(), outcomes: SkillOutcomes, timestamp: z.string() });
export type SkillFeedbackResult = z.infer<typeof SkillFeedbackResult>;

export const SkillBodyResponse = SkillSummary.extend({
  body: z.string(),
  body_line: z.number().int().min(1),
  /** Present once the skill has recorded outcomes (additional field). */
  outcomes: SkillOutcomes.optional(),
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
  // Lengths and the name rule are checked by the strict skill validator (422 with every problem).
  name: z.string().max(200),
  description: z.string().max(10_000),
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

/** A rendered level-1 index and what the size budget cost it. */
export const RenderedSkillIndex = z.object({
  text: z.string(),
  truncated: z.object({ shortened: z.number().int().min(0), dropped: z.array(z.string()) }),
});
export type RenderedSkillIndex = z.infer<typeof RenderedSkillIndex>;

export const SkillIndexFormat = z.enum(['json', 'markdown', 'xml']);
export type SkillIndexFormat = z.infer<typeof SkillIndexFormat>;

/**
 * GET /skills query: `format` picks the JSON index or one rendered prompt block; `budget` overrides the configured size
 * budget.
 */
export const SkillIndexQuery = z.strictObject({
  format: SkillIndexFormat.default('json'),
  budget: z.coerce.number().int().min(0).max(10_000_000).optional(),
  /** Only runtime-created skills whose writer matches (as GET /memories filters memories). */
  ...WriterFilter,
  /** Only skills installed from this git source (as given to POST /skills/install). */
  installed_from: z.string().trim().min(1).max(2048).optional(),
});
export type SkillIndexQuery = z.infer<typeof SkillIndexQuery>;

/**
 * The registry's full level-1 answer: every skill, what was shadowed or skipped, root problems, and both renderings.
 */
export const SkillRegistryIndex = SkillIndexResponse.extend({
  warnings: z.array(SkillProblem),
  budget: z.number().int().nullable(),
  rendered: z.object({ markdown: RenderedSkillIndex, xml: RenderedSkillIndex }),
});
export type SkillRegistryIndex = z.infer<typeof SkillRegistryIndex>;

/** GET /skills?format=markdown|xml */
export const SkillIndexText = RenderedSkillIndex.extend({
  format: z.enum(['markdown', 'xml']),
  budget: z.number().int().nullable(),
});
export type SkillIndexText = z.infer<typeof SkillIndexText>;

export const SKILL_SEARCH_LIMIT_MAX = 50;

/** GET /skills/search */
export const SkillSearchQuery = z.strictObject({
  q: z.string().trim().min(1, 'Query cannot be empty').max(2000),
  limit: z.coerce.number().int().min(1).max(SKILL_SEARCH_LIMIT_MAX).default(5),
  min_score: z.coerce.number().min(0).max(1).default(0),
  /** Only skills written so (runtime-created ones: skills from disk have no writer and never match). */
  ...WriterFilter,
  /** Only skills installed from this git source. */
  installed_from: z.string().trim().min(1).max(2048).optional(),
});
export type SkillSearchQuery = z.infer<typeof SkillSearchQuery>;

export const SkillSearchHit = z.object({
  name: z.string(),
  description: z.string(),
  source: SkillSource,
  location: z.string(),
  version: z.string(),
  score: z.number().min(0).max(1),
  /** Present once the skill has recorded outcomes. */
  outcomes: SkillOutcomes.optional(),
  /** Who wrote it: runtime-created skills only. */
  provenance: Provenance.optional(),
  /** Where it was installed from: skills installed from git only. */
  installed_from: InstalledFrom.optional(),
});
export type SkillSearchHit = z.infer<typeof SkillSearchHit>;

export const SkillSearchResponse = z.object({
  results: z.array(SkillSearchHit),
  query: z.string(),
  total: z.number().int().min(0),
  search_time_ms: z.number(),
});
export type SkillSearchResponse = z.infer<typeof SkillSearchResponse>;

/** POST /skills/reload: what changed on disk and how many skills were (re-)embedded for search. */
export const SkillReloadResult = SkillChanges.extend({
  skills: z.number().int().min(0),
  indexed: z.number().int().min(0),
  duration_ms: z.number(),
});
export type SkillReloadResult = z.infer<typeof SkillReloadResult>;

/** A skill's level-3 resource path: relative to its folder, checked for containment by the registry. */
export const SkillResourcePath = z.string().min(1).max(4096);

/**
 * A skill name as a path segment or request field; any string the registry can look up (unknown ones get suggestions).
 */
export const SkillPathName = z.string().min(1).max(256);

const R = ServiceName.SkillRegistry;
const ByName = z.object({ tenant: TenantId, name: SkillPathName });

/**
 * Skill-registry operations. On-disk and bundled roots are shared and read-only; a skill created through the API
 * belongs to its tenant and is seen by that tenant alone.
 */
export const SkillRoutes = {
  /** The level-1 index; `only` keeps the skills an agent's policy permits (the rendered text lists only those). */
  index: route(
    R,
    'index',
    z.object({
      tenant: TenantId,
      budget: z.number().int().min(0).optional(),
      only: NamePatterns.optional(),
      written: WriterQuery.optional(),
      installed_from: z.string().max(2048).optional(),
    }),
    SkillRegistryIndex,
  ),
  get: route(R, 'get', ByName, SkillBodyResponse),
  resources: route(R, 'resources', ByName, SkillResourceList),
  resource: route(R, 'resource', ByName.extend({ path: SkillResourcePath }), SkillResourceContent),
  search: route(R, 'search', z.object({ tenant: TenantId, query: SkillSearchQuery }), SkillSearchResponse),
  reload: route(R, 'reload', z.object({ tenant: TenantId }), SkillReloadResult),
  create: route(
    R,
    'create',
    z.object({ tenant: TenantId, skill: SkillCreateBody, writer: ScopedWriter.optional() }),
    SkillBodyResponse,
  ),
  /** Records one outcome of a skill's use (feedback, an execution, a turn after load_skill). */
  feedback: route(R, 'feedback', ByName.extend({ feedback: SkillFeedbackBody }), SkillFeedbackResult),
  /**
   * One run of an executable skill as an outcome (sent by the skill-runner): counted under the skill's id, which is
   * also the SKILL.md skill of that name, and for each SKILL.md skill that offers it in its `allowed-tools`.
   */
  executed: route(
    R,
    'executed',
    z.object({ tenant: TenantId, id: SkillPathName, success: z.boolean() }),
    z.object({ counted: z.array(z.string()), outcomes: SkillOutcomes }),
  ),
} as const;
