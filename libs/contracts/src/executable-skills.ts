import { z } from 'zod';
import { AgentName, IsoTimestamp, TenantId } from './common.js';

export const SKILL_TIMEOUT_MS_DEFAULT = 30_000;
export const SKILL_TIMEOUT_MS_MAX = 300_000;
export const SKILL_MEMORY_MB_DEFAULT = 128;
export const SKILL_MEMORY_MB_MIN = 16;
export const SKILL_MEMORY_MB_MAX = 1024;

/** Executable skill ids follow the skill-name rules. */
export const SkillId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'skill ids are 1-64 lowercase letters, digits and single hyphens');

export const SkillParamType = z.enum(['string', 'number', 'integer', 'boolean', 'array', 'object']);
export type SkillParamType = z.infer<typeof SkillParamType>;

/** Parameter names must be valid identifiers so every model provider accepts them as tool arguments. */
export const SkillParamName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'parameter names are identifiers of 1-64 characters');

const Count = z.int().min(0);

/** One parameter (or nested item/property, or the result) of an executable skill: a JSON-Schema subset. */
export const SkillParameter = z.strictObject({
  type: SkillParamType,
  description: z.string().max(1024).optional(),
  required: z.boolean().optional(),
  default: z.json().optional(),
  enum: z
    .array(z.union([z.string(), z.number(), z.boolean()]))
    .min(1)
    .max(256)
    .optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  minLength: Count.optional(),
  maxLength: Count.optional(),
  minItems: Count.optional(),
  maxItems: Count.optional(),
  get items(): z.ZodOptional<typeof SkillParameter> {
    return SkillParameter.optional();
  },
  get properties(): z.ZodOptional<z.ZodRecord<typeof SkillParamName, typeof SkillParameter>> {
    return z.record(SkillParamName, SkillParameter).optional();
  },
});
export type SkillParameter = z.infer<typeof SkillParameter>;

/** An outbound host: `api.example.com`, `api.example.com:8443` or `*.example.com` (subdomains only, not the apex). */
export const SkillHostPattern = z
  .string()
  .max(253)
  .regex(
    /^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$/,
    'hosts are lowercase host names, optionally *. prefixed and :port suffixed',
  );

/** A file root: `self` (the skill's private data dir) or `shared/<name>` (a named area several skills may share). */
export const SkillFsRoot = z
  .string()
  .regex(/^(self|shared\/[a-z0-9]+(-[a-z0-9]+)*)$/, 'file roots are "self" or "shared/<name>"');

export const SkillEnvName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'environment variable names are UPPER_SNAKE_CASE');

/** What a skill may touch; everything not listed is refused. */
export const SkillPermissions = z.strictObject({
  net: z.array(SkillHostPattern).max(64).default([]),
  env: z.array(SkillEnvName).max(64).default([]),
  fs: z
    .strictObject({ read: z.array(SkillFsRoot).max(16).default([]), write: z.array(SkillFsRoot).max(16).default([]) })
    .default({ read: [], write: [] }),
});
export type SkillPermissions = z.infer<typeof SkillPermissions>;

/** skill.json of an executable skill. */
export const SkillManifest = z
  .strictObject({
    id: SkillId,
    name: z.string().trim().min(1).max(128),
    description: z.string().trim().min(1).max(1024),
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/, 'version must be a semver string'),
    parameters: z.record(SkillParamName, SkillParameter).default({}),
    tags: z.array(z.string().trim().min(1).max(64)).max(32).default([]),
    createdBy: z.string().trim().min(1).max(128),
    timeoutMs: z.int().min(100).max(SKILL_TIMEOUT_MS_MAX).default(SKILL_TIMEOUT_MS_DEFAULT),
    memoryMb: z.int().min(SKILL_MEMORY_MB_MIN).max(SKILL_MEMORY_MB_MAX).default(SKILL_MEMORY_MB_DEFAULT),
    permissions: SkillPermissions.default({ net: [], env: [], fs: { read: [], write: [] } }),
    result: SkillParameter.optional(),
  })
  .superRefine((manifest, ctx) => {
    for (const [name, param] of Object.entries(manifest.parameters)) checkParameter(param, ['parameters', name], ctx);
    if (manifest.result) checkParameter(manifest.result, ['result'], ctx);
  });
export type SkillManifest = z.infer<typeof SkillManifest>;
export type SkillManifestInput = z.input<typeof SkillManifest>;

/** What `execute()` returns, and what every execution answers. */
export const SkillResult = z.strictObject({
  success: z.boolean(),
  result: z.unknown().optional(),
  error: z.string().optional(),
});
export type SkillResult = z.infer<typeof SkillResult>;

export const SkillExecutionOutcome = z.enum([
  'succeeded',
  'failed',
  'threw',
  'invalid_result',
  'timed_out',
  'out_of_memory',
  'output_limit',
  'crashed',
]);
export type SkillExecutionOutcome = z.infer<typeof SkillExecutionOutcome>;

/** Who asked for an execution. */
export const SkillCaller = z.object({
  tenant: TenantId,
  agent: AgentName,
  correlationId: z.string().max(128).optional(),
});
export type SkillCaller = z.infer<typeof SkillCaller>;

/** The audit record of one execution. */
export const SkillExecutionRecord = z.object({
  executionId: z.uuid(),
  skillId: SkillId,
  version: z.string(),
  digest: z.string().regex(/^sha256:[a-f0-9]{64}$/),
  caller: SkillCaller,
  startedAt: IsoTimestamp,
  durationMs: z.number().nonnegative(),
  outcome: SkillExecutionOutcome,
  error: z.string().optional(),
  stdout: z.string(),
  stderr: z.string(),
  logs: z.array(z.string()),
  outputTruncated: z.boolean(),
});
export type SkillExecutionRecord = z.infer<typeof SkillExecutionRecord>;

/** The tool name an agent sees: `skill_<id>` with hyphens as underscores. */
export function skillToolName(id: string): string {
  return `skill_${id.replaceAll('-', '_')}`;
}

/** A zod schema checking one value against a parameter: type, enum, limits, nested items/properties. */
export function parameterSchema(param: SkillParameter): z.ZodType {
  if (param.enum) return z.literal(param.enum as [string | number | boolean]);
  switch (param.type) {
    case 'string':
      return withLimits(z.string(), param.minLength, param.maxLength);
    case 'number':
      return withLimits(z.number(), param.minimum, param.maximum);
    case 'integer':
      return withLimits(z.int(), param.minimum, param.maximum);
    case 'boolean':
      return z.boolean();
    case 'array':
      return withLimits(z.array(param.items ? parameterSchema(param.items) : z.json()), param.minItems, param.maxItems);
    case 'object':
      return param.properties ? objectSchema(param.properties) : z.record(z.string(), z.json());
  }
}

/** Validates a call's arguments: unknown keys refused, defaults applied, required enforced. */
export function buildArgsSchema(manifest: Pick<SkillManifest, 'parameters'>): z.ZodType<Record<string, unknown>> {
  return objectSchema(manifest.parameters) as z.ZodType<Record<string, unknown>>;
}

/** The JSON Schema of a skill's tool input, for LLM tool definitions. */
export function manifestToJsonSchema(manifest: Pick<SkillManifest, 'parameters'>): Record<string, unknown> {
  return objectJsonSchema(manifest.parameters);
}

function objectSchema(properties: Record<string, SkillParameter>): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, param] of Object.entries(properties)) {
    const base = parameterSchema(param);
    const fallback = param.default;
    if (fallback !== undefined) shape[name] = base.default(() => structuredClone(fallback));
    else shape[name] = param.required ? base : base.optional();
  }
  return z.strictObject(shape);
}

interface Bounded<T> {
  min(n: number): T;
  max(n: number): T;
}

function withLimits<T extends Bounded<T>>(schema: T, min?: number, max?: number): T {
  const low = min === undefined ? schema : schema.min(min);
  return max === undefined ? low : low.max(max);
}

function parameterJsonSchema(param: SkillParameter): Record<string, unknown> {
  const { required: _required, items, properties, ...rest } = param;
  if (param.type === 'object' && properties) return { ...rest, ...objectJsonSchema(properties) };
  return { ...rest, ...(items ? { items: parameterJsonSchema(items) } : {}) };
}

function objectJsonSchema(properties: Record<string, SkillParameter>): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, param] of Object.entries(properties)) {
    props[name] = parameterJsonSchema(param);
    if (param.required && param.default === undefined) required.push(name);
  }
  return { type: 'object', properties: props, required, additionalProperties: false };
}

const LIMITS_BY_TYPE: Record<string, readonly SkillParamType[]> = {
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  minLength: ['string'],
  maxLength: ['string'],
  minItems: ['array'],
  maxItems: ['array'],
  items: ['array'],
  properties: ['object'],
};

function checkParameter(param: SkillParameter, path: (string | number)[], ctx: z.RefinementCtx): void {
  const before = ctx.value;
  let ok = true;
  const fail = (message: string, key?: string) => {
    ok = false;
    ctx.addIssue({ code: 'custom', message, path: key ? [...path, key] : path, input: before });
  };
  for (const [key, types] of Object.entries(LIMITS_BY_TYPE)) {
    if (param[key as keyof SkillParameter] !== undefined && !types.includes(param.type))
      fail(`${key} does not apply to type ${param.type}`, key);
  }
  for (const [lo, hi] of [
    ['minimum', 'maximum'],
    ['minLength', 'maxLength'],
    ['minItems', 'maxItems'],
  ] as const) {
    const a = param[lo];
    const b = param[hi];
    if (a !== undefined && b !== undefined && a > b) fail(`${lo} must not exceed ${hi}`, lo);
  }
  if (param.enum && !param.enum.every((v) => matchesType(v, param.type)))
    fail(`enum values must be of type ${param.type}`, 'enum');
  if (param.items) checkParameter(param.items, [...path, 'items'], ctx);
  for (const [name, child] of Object.entries(param.properties ?? {}))
    checkParameter(child, [...path, 'properties', name], ctx);
  if (ok && param.default !== undefined && !parameterSchema(param).safeParse(param.default).success) {
    fail(`default does not satisfy the parameter's own schema`, 'default');
  }
}

function matchesType(value: unknown, type: SkillParamType): boolean {
  if (type === 'integer') return Number.isInteger(value);
  if (type === 'number' || type === 'string' || type === 'boolean') return typeof value === type;
  return false;
}
