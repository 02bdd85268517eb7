import { z } from 'zod';
import { TenantId } from './common.js';
import { ScopedWriter } from './provenance.js';
import { route, ServiceName } from './route.js';
import { InstalledFrom, InstalledKind } from './skill-origin.js';
import { SkillPathName, SkillProblem } from './skills.js';

/** How long a caller waits for an install or an update: the registry's git time limit (at most 4 min) plus writing. */
export const SKILL_INSTALL_BUS_TIMEOUT_MS = 300_000;
/** The longest time limit the registry may give git for one source. */
export const SKILL_INSTALL_GIT_TIMEOUT_MAX_MS = 240_000;
/** Longest SKILL.md diff an update reports per skill (characters); longer ones are cut and marked truncated. */
export const SKILL_DIFF_MAX_CHARS = 16_000;

/**
 * A git source as given: `https://`, `git://`, `ssh://` or `file://` URL, or a local path (checked by the registry).
 */
export const SkillSourceUrl = z.string().trim().min(1, 'source cannot be empty').max(2048);

/** A branch, tag or full commit id; refused when git could take it for an option or it holds control characters. */
export const GitRef = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: git refuses control characters in a ref name; so do we
    /^(?!-)[^\u0000-\u0020\u007f~^:?*[\\]+$/,
    'a ref is a branch, tag or commit id (no spaces, ~ ^ : ? * [ \\, not starting with -)',
  );

/** A folder of the repository: relative, `/`-separated, no `.` or `..` segment. Empty means the repository's root. */
export const RepoPath = z
  .string()
  .trim()
  .max(1024)
  .transform((p) => p.replace(/^\/+|\/+$/g, ''))
  .refine((p) => p === '' || p.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\\')), {
    error: 'path is a folder inside the repository: relative, without "." or ".." segments',
  });

export const CommitId = z
  .string()
  .regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/, 'a full commit id (40 or 64 lowercase hex digits)');

/** POST /skills/install */
export const SkillInstallBody = z.strictObject({
  source: SkillSourceUrl,
  ref: GitRef.optional(),
  path: RepoPath.optional(),
  /** Only these skills of the collection (by folder name); all by default. */
  skills: z.array(SkillPathName).min(1).max(500).optional(),
  /** Replace a skill of the same name (the tenant's own) or shadow a shared one; a clash is refused otherwise. */
  overwrite: z.boolean().default(false),
  /** Fetch and check, report what would happen, change nothing. */
  dry_run: z.boolean().default(false),
  /** Install only if the ref still resolves to this commit (what a dry run reported); CONFLICT otherwise. */
  expect_commit: CommitId.optional(),
});
export type SkillInstallBody = z.infer<typeof SkillInstallBody>;

/** One skill an install or update placed (or, in a dry run, would place). */
export const InstalledSkill = z.object({
  name: z.string(),
  path: z.string(),
  kinds: z.array(InstalledKind),
  /** It replaced the tenant's own skill of that name, or now shadows a shared one for this tenant (overwrite). */
  replaced: z.boolean(),
  /** An executable part runs only after the tenant consents (POST /executable-skills/{id}/consent). */
  awaiting_consent: z.boolean(),
  warnings: z.array(SkillProblem),
});
export type InstalledSkill = z.infer<typeof InstalledSkill>;

export const RefusalReason = z.enum(['invalid', 'clash', 'escape', 'too_large', 'unsupported']);
export type RefusalReason = z.infer<typeof RefusalReason>;

/** One skill folder that was not installed, with every problem found (file, line, field). */
export const RefusedSkill = z.object({
  /** The folder name (null for a repository-root skill without a usable name). */
  name: z.string().nullable(),
  path: z.string(),
  kinds: z.array(InstalledKind),
  reason: RefusalReason,
  problems: z.array(SkillProblem),
  /** Problems beyond those listed (the reply is kept within the bus's size). */
  more_problems: z.number().int().min(0).optional(),
});
export type RefusedSkill = z.infer<typeof RefusedSkill>;

export const SkillInstallResult = z.object({
  source: z.string(),
  ref: z.string(),
  commit: z.string(),
  path: z.string(),
  dry_run: z.boolean(),
  installed: z.array(InstalledSkill),
  refused: z.array(RefusedSkill),
  /** Problems not tied to one skill (folders deeper than discovery looks, links, submodules). */
  warnings: z.array(SkillProblem),
});
export type SkillInstallResult = z.infer<typeof SkillInstallResult>;

/** What an update changed in one skill: the SKILL.md as a unified diff, and the folder's files. */
export const SkillUpdateChange = z.object({
  name: z.string(),
  from_commit: z.string(),
  to_commit: z.string(),
  /** Unified diff of SKILL.md (empty when only other files changed). */
  diff: z.string(),
  diff_truncated: z.boolean(),
  files: z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) }),
  awaiting_consent: z.boolean(),
});
export type SkillUpdateChange = z.infer<typeof SkillUpdateChange>;

/** One source moved to its ref's newest commit. */
export const SkillSourceUpdate = z.object({
  source: z.string(),
  ref: z.string(),
  commit: z.string(),
  updated: z.array(SkillUpdateChange),
  /** Already at the newest commit, or no file of theirs changed. */
  unchanged: z.array(z.string()),
  /** New skills of the collection (whole-source updates only). */
  added: z.array(InstalledSkill),
  /** Installed from the source but no longer in it: kept as they are (remove them with DELETE). */
  gone_upstream: z.array(z.string()),
  /** The new version failed a check: the installed version stays. */
  refused: z.array(RefusedSkill),
});
export type SkillSourceUpdate = z.infer<typeof SkillSourceUpdate>;

export const SkillUpdateResult = z.object({ sources: z.array(SkillSourceUpdate) });
export type SkillUpdateResult = z.infer<typeof SkillUpdateResult>;

/** POST /skills/update: every skill installed from `source` (every installed source when absent). */
export const SkillSourceUpdateBody = z.strictObject({
  source: SkillSourceUrl.optional(),
  overwrite: z.boolean().default(false),
});
export type SkillSourceUpdateBody = z.infer<typeof SkillSourceUpdateBody>;

/** POST /skills/{name}/update: an empty body (or none). */
export const SkillUpdateBody = z.strictObject({});

/** DELETE /skills/{name}: without `?confirm=true`, 409 with what would be deleted. */
export const SkillDeleteQuery = z.strictObject({ confirm: z.enum(['true', 'false']).default('false') });

/** DELETE /skills/{name} without confirmation answers 409 with this preview in the error details. */
export const SkillDeletePreview = z.object({
  confirm_required: z.literal(true),
  name: z.string(),
  location: z.string(),
  kinds: z.array(InstalledKind),
  installed_from: InstalledFrom.optional(),
  confirm_with: z.string(),
});

export const SkillDeleted = z.object({
  name: z.string(),
  deleted: z.literal(true),
  kinds: z.array(InstalledKind),
  installed_from: InstalledFrom.optional(),
});
export type SkillDeleted = z.infer<typeof SkillDeleted>;

/** POST /executable-skills/{id}/consent: the tenant lets this exact version (digest) of an installed skill run. */
export const ExecutableSkillConsentBody = z.strictObject({
  digest: z.string().regex(/^sha256:[a-f0-9]{64}$/, 'not a skill digest'),
});
export type ExecutableSkillConsentBody = z.infer<typeof ExecutableSkillConsentBody>;

/** The `installed_from` filter of GET /skills and GET /skills/search: skills installed from this source only. */
export const InstalledSourceFilter = { installed_from: SkillSourceUrl.optional() };

const R = ServiceName.SkillRegistry;
const slow = { timeoutMs: SKILL_INSTALL_BUS_TIMEOUT_MS };

/** Skills installed from git: into the caller tenant's catalog only, pinned to a commit. */
export const SkillInstallRoutes = {
  install: route(
    R,
    'install',
    z.object({ tenant: TenantId, body: SkillInstallBody, writer: ScopedWriter.optional() }),
    SkillInstallResult,
    slow,
  ),
  /** One installed skill (`name`) or every skill of a source (`source`), or every installed source (neither). */
  update: route(
    R,
    'update',
    z.object({
      tenant: TenantId,
      name: SkillPathName.optional(),
      source: SkillSourceUrl.optional(),
      overwrite: z.boolean().default(false),
      writer: ScopedWriter.optional(),
    }),
    SkillUpdateResult,
    slow,
  ),
  delete: route(R, 'delete', z.object({ tenant: TenantId, name: SkillPathName, confirm: z.boolean() }), SkillDeleted),
} as const;
