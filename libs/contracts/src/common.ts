import { z } from 'zod';

/** Agent names follow the skill-name rules: lowercase letters, digits, single hyphens. */
export const AgentName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'agent names are 1-64 lowercase letters, digits and single hyphens');

/** A name pattern of an agent's policy: `*` matches any run of characters, `?` one character. */
export const NamePattern = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_*?:.-]+$/, 'patterns are names with * and ? wildcards');

/** Which names are permitted: those matching an `allow` pattern and no `deny` pattern (deny wins). */
export const NamePatterns = z.strictObject({
  allow: z.array(NamePattern).max(100).default(['*']),
  deny: z.array(NamePattern).max(100).default([]),
});
export type NamePatterns = z.infer<typeof NamePatterns>;

export const TenantId = z.string().min(1).max(128);

/** Who a request acts for; every store query filters on both, never ranks by them. */
export const Scope = z.object({ tenant: TenantId, agent: AgentName });
export type Scope = z.infer<typeof Scope>;

export const IsoTimestamp = z.iso.datetime({ offset: true });
export const IsoDate = z.iso.date();

export const Health = z.object({
  status: z.enum(['healthy', 'degraded', 'unhealthy']),
  version: z.string(),
  timestamp: z.string(),
});
export type Health = z.infer<typeof Health>;

/** GET /health's `model`: whether agent turns have a model (null while the agent runtime does not answer). */
export const ModelStatus = z.object({
  configured: z.boolean().nullable(),
  name: z.string().optional(),
  hint: z.string().optional(),
});
export type ModelStatus = z.infer<typeof ModelStatus>;

/** A service's own health report over the bus. */
export const ServiceHealth = z.object({
  service: z.string(),
  instance: z.string(),
  ready: z.boolean(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ServiceHealth = z.infer<typeof ServiceHealth>;

export const Empty = z.object({}).strict();

/** Query-string integers arrive as strings: coerce, then range-check. */
export function queryInt(min: number, max: number, fallback: number) {
  return z.coerce.number().int().min(min).max(max).default(fallback);
}

/** Query-string booleans: "true"/"1" or "false"/"0" (z.coerce.boolean would read "false" as true). */
export function queryBool() {
  return z
    .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
    .transform((v) => v === true || v === 'true' || v === '1')
    .default(false);
}

/** One signal's part in a search score (the ranking module's explanation): the parts sum to the score. */
export const ScoreExplanation = z.array(
  z.object({
    signal: z.string(),
    /**
     * relevance: adds its weighted share of the match; adjustment: moves the score within its bound (importance,
     * recency, feedback).
     */
    kind: z.enum(['relevance', 'adjustment']).optional(),
    value: z.number(),
    /** A relevance signal's share of the relevance (its weight over the weights of the signals present). */
    weight: z.number().optional(),
    /** The least and most the signal could have contributed to this score. */
    bound: z.object({ min: z.number(), max: z.number() }).optional(),
    contribution: z.number(),
  }),
);
