import { z } from 'zod';
import { IsoTimestamp, queryInt, Scope, TenantId } from './common.js';
import {
  SKILL_TIMEOUT_MS_MAX,
  SkillCaller,
  SkillExecutionOutcome,
  SkillExecutionRecord,
  SkillId,
  SkillManifest,
} from './executable-skills.js';
import { Provenance, ScopedWriter, WriterFilter, WriterQuery } from './provenance.js';
import { event, route, ServiceName } from './route.js';
import { InstalledFrom } from './skill-origin.js';
import { SkillOutcomes } from './skills.js';

/** execute.ts of a created or updated skill, as text. */
export const EXECUTABLE_SKILL_CODE_MAX = 256 * 1024;
/** Total bytes of a skill folder the registry sends to a runner (JSON-encoded on the bus, under NATS' 1 MiB). */
export const EXECUTABLE_SKILL_FILES_MAX_BYTES = 512 * 1024;
export const EXECUTABLE_SKILL_FILES_MAX_COUNT = 64;
/** How long a caller waits for an execution: the longest skill timeout plus fetching and recording. */
export const SKILL_EXECUTE_BUS_TIMEOUT_MS = SKILL_TIMEOUT_MS_MAX + 15_000;

export const ExecutableSkillCode = z.string().min(1, 'code cannot be empty').max(EXECUTABLE_SKILL_CODE_MAX);
export const SkillDigest = z.string().regex(/^sha256:[a-f0-9]{64}$/, 'not a skill digest');

/** `awaiting_consent`: installed from git and valid, but it runs only once the tenant consents to this version. */
export const ExecutableSkillStatus = z.enum(['loaded', 'invalid', 'awaiting_consent']);
export type ExecutableSkillStatus = z.infer<typeof ExecutableSkillStatus>;

/** Where a skill folder lives: managed at runtime (writable) or bundled with Alfred (read-only). */
export const ExecutableSkillSource = z.enum(['managed', 'bundled']);
export type ExecutableSkillSource = z.infer<typeof ExecutableSkillSource>;

/** One executable skill as listed: loaded with its tool view, or invalid with the reason. */
export const ExecutableSkillInfo = z.object({
  id: z.string(),
  status: ExecutableSkillStatus,
  reason: z.string().optional(),
  source: ExecutableSkillSource,
  digest: z.string(),
  version: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
  created_by: z.string().optional(),
  tool_name: z.string().optional(),
  /** JSON Schema of the tool input derived from the manifest's parameters. */
  input_schema: z.record(z.string(), z.unknown()).optional(),
  updated_at: IsoTimestamp,
  /** Who wrote the current version of a managed skill (additional field; absent on bundled ones). */
  provenance: Provenance.optional(),
  /** What its runs achieved, once any were recorded (the counters skill search ranks by). */
  outcomes: SkillOutcomes.optional(),
  /** Where a skill installed from git came from, pinned to its commit. */
  installed_from: InstalledFrom.optional(),
  /** The version (digest) the tenant consented to, for a skill installed from git. */
  consented_digest: z.string().optional(),
});
export type ExecutableSkillInfo = z.infer<typeof ExecutableSkillInfo>;

/** GET /executable-skills/{id}: the listing plus the manifest and the code. */
export const ExecutableSkillDetail = ExecutableSkillInfo.extend({
  manifest: SkillManifest.optional(),
  code: z.string().optional(),
});
export type ExecutableSkillDetail = z.infer<typeof ExecutableSkillDetail>;

export const ExecutableSkillList = z.object({ skills: z.array(ExecutableSkillInfo) });

/** GET /executable-skills query: only the skills whose writer matches (as GET /memories filters memories). */
export const ExecutableSkillListQuery = z.strictObject(WriterFilter);
export type ExecutableSkillList = z.infer<typeof ExecutableSkillList>;

/**
 * POST /executable-skills: manifest fields plus `code`. `name` defaults to the id, `version` to 1.0.0,
 * `createdBy` to the calling agent; the manifest is then validated strictly (422 with field details).
 */
export const ExecutableSkillCreateBody = z.object({ id: z.unknown(), code: ExecutableSkillCode }).catchall(z.unknown());
export type ExecutableSkillCreateBody = z.infer<typeof ExecutableSkillCreateBody>;

const patchable = <T extends string>(keys: readonly T[]) =>
  Object.fromEntries(keys.map((k) => [k, z.unknown().optional()])) as Record<T, z.ZodOptional<z.ZodUnknown>>;

/**
 * PATCH /executable-skills/{id}: any manifest field but `id`, and/or `code`. The merged manifest is
 * validated as a whole; without an explicit `version` the patch number is bumped.
 */
export const ExecutableSkillPatch = z
  .strictObject({
    ...patchable([
      'name',
      'description',
      'version',
      'parameters',
      'tags',
      'createdBy',
      'timeoutMs',
      'memoryMb',
      'permissions',
      'result',
    ] as const),
    code: ExecutableSkillCode.optional(),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), {
    error: 'a patch must change at least one field',
  });
export type ExecutableSkillPatch = z.infer<typeof ExecutableSkillPatch>;

/** DELETE without confirmation answers 409 with this preview in the error details. */
export const ExecutableSkillDeletePreview = z.object({
  confirm_required: z.literal(true),
  id: z.string(),
  version: z.string().optional(),
  digest: z.string(),
  files: z.array(z.string()),
  confirm_with: z.string(),
});

export const ExecutableSkillDeleted = z.object({ id: z.string(), deleted: z.literal(true), digest: z.string() });
export type ExecutableSkillDeleted = z.infer<typeof ExecutableSkillDeleted>;

export const ExecutableSkillReloaded = z.object({
  loaded: z.number().int().min(0),
  invalid: z.number().int().min(0),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
});
export type ExecutableSkillReloaded = z.infer<typeof ExecutableSkillReloaded>;

/** What a runner needs to find a skill's files: its current digest, and whether it can run. */
export const ExecutableSkillResolved = z.object({
  id: SkillId,
  status: ExecutableSkillStatus,
  reason: z.string().optional(),
  digest: z.string(),
  version: z.string().optional(),
});
export type ExecutableSkillResolved = z.infer<typeof ExecutableSkillResolved>;

export const SkillFile = z.object({ path: z.string(), encoding: z.enum(['utf8', 'base64']), content: z.string() });
export type SkillFile = z.infer<typeof SkillFile>;

/** The files of one skill version, by digest: runners cache them and never share a disk with the registry. */
export const SkillFiles = z.object({
  id: SkillId,
  digest: SkillDigest,
  files: z.array(SkillFile).max(EXECUTABLE_SKILL_FILES_MAX_COUNT),
});
export type SkillFiles = z.infer<typeof SkillFiles>;

/** POST /executable-skills/{id}/execute answer. */
export const SkillExecuteResponse = z.object({
  success: z.boolean(),
  result: z.unknown().optional(),
  error: z.string().optional(),
  execution_id: z.string(),
  duration_ms: z.number().nonnegative(),
  outcome: SkillExecutionOutcome,
  skill_id: z.string(),
  version: z.string(),
  digest: z.string(),
  runner: z.string(),
});
export type SkillExecuteResponse = z.infer<typeof SkillExecuteResponse>;

/** The audit event of one execution, with the runner instance that ran it. */
export const SkillExecutionEvent = SkillExecutionRecord.extend({ runner: z.string() });
export type SkillExecutionEvent = z.infer<typeof SkillExecutionEvent>;

export const SKILL_EXECUTION_STREAM = 'ALFRED_SKILL_EXECUTIONS';
/** Key: the skill id; message id: the execution id. */
export const SkillExecutionRecorded = event('skill-execution', 'recorded', SKILL_EXECUTION_STREAM, SkillExecutionEvent);

/** GET /executable-skills/{id}/executions query: newest first. */
export const SkillExecutionsQuery = z.strictObject({ limit: queryInt(1, 100, 20), offset: queryInt(0, 1_000_000, 0) });
export type SkillExecutionsQuery = z.infer<typeof SkillExecutionsQuery>;

export const SkillExecutionList = z.object({
  skill_id: z.string(),
  executions: z.array(SkillExecutionEvent),
  total: z.number().int().min(0),
  limit: z.number().int(),
  offset: z.number().int(),
});
export type SkillExecutionList = z.infer<typeof SkillExecutionList>;

const R = ServiceName.SkillRegistry;
const X = ServiceName.SkillRunner;
const byId = z.object({ tenant: TenantId, id: SkillId });

/** Who asked a change for: `user` (an API caller) or `agent` (an agent's skill tool, after the user's consent). */
export const SkillChangeOrigin = z.object({ by: z.enum(['user', 'agent']), consented: z.boolean().default(false) });
export type SkillChangeOrigin = z.infer<typeof SkillChangeOrigin>;

/**
 * Executable-skill management on the skill-registry; managed skills belong to one tenant, bundled ones are shared and
 * read-only.
 */
export const ExecutableSkillRoutes = {
  list: route(R, 'exec-list', z.object({ tenant: TenantId, written: WriterQuery.optional() }), ExecutableSkillList),
  get: route(R, 'exec-get', byId, ExecutableSkillDetail),
  create: route(
    R,
    'exec-create',
    z.object({
      scope: Scope,
      body: ExecutableSkillCreateBody,
      origin: SkillChangeOrigin.default({ by: 'user', consented: false }),
      writer: ScopedWriter.optional(),
    }),
    ExecutableSkillDetail,
  ),
  update: route(
    R,
    'exec-update',
    z.object({
      tenant: TenantId,
      id: SkillId,
      patch: ExecutableSkillPatch,
      origin: SkillChangeOrigin.default({ by: 'user', consented: false }),
      writer: ScopedWriter.optional(),
    }),
    ExecutableSkillDetail,
  ),
  delete: route(
    R,
    'exec-delete',
    z.object({ tenant: TenantId, id: SkillId, confirm: z.boolean() }),
    ExecutableSkillDeleted,
  ),
  reload: route(R, 'exec-reload', z.object({ tenant: TenantId }), ExecutableSkillReloaded),
  resolve: route(R, 'exec-resolve', byId, ExecutableSkillResolved),
  files: route(R, 'exec-files', z.object({ tenant: TenantId, id: SkillId, digest: SkillDigest }), SkillFiles),
  /** The tenant lets this version (digest) of a skill installed from git run; a later update needs consent again. */
  consent: route(
    R,
    'exec-consent',
    z.object({ tenant: TenantId, id: SkillId, digest: SkillDigest }),
    ExecutableSkillDetail,
  ),
} as const;

/** Execution on the skill-runner queue group. */
export const SkillRunnerRoutes = {
  execute: route(X, 'execute', z.object({ id: SkillId, args: z.unknown(), caller: SkillCaller }), SkillExecuteResponse),
  executions: route(
    X,
    'executions',
    z.object({ scope: Scope, id: SkillId, query: SkillExecutionsQuery }),
    SkillExecutionList,
  ),
} as const;
