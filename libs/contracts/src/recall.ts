import { z } from 'zod';
import { Scope, queryInt } from './common.js';
import { route, ServiceName } from './route.js';

export const RECALL_BUDGET_MAX = 200_000;

/** GET /recall query. */
export const RecallQuery = z.strictObject({
  q: z.string().trim().min(1, 'Query cannot be empty').max(2000),
  budget_tokens: queryInt(1, RECALL_BUDGET_MAX, 2000),
  limit: queryInt(1, 100, 20),
  min_score: z.coerce.number().min(0).max(1).default(0),
});
export type RecallQuery = z.infer<typeof RecallQuery>;

export const RecallKind = z.enum(['memory', 'remediation', 'skill']);
export type RecallKind = z.infer<typeof RecallKind>;

/** One hit of any kind: `id` is the memory/remediation id or the skill name; `text` is what it contributes. */
export const RecallHit = z.object({
  kind: RecallKind,
  id: z.string(),
  name: z.string().optional(),
  score: z.number().min(0).max(1),
  text: z.string(),
  tokens: z.number().int().min(0),
});
export type RecallHit = z.infer<typeof RecallHit>;

export const RecallResponse = z.object({
  query: z.string(),
  results: z.array(RecallHit),
  budget_tokens: z.number().int(),
  used_tokens: z.number().int(),
  /** True when a hit was left out because it did not fit the budget. */
  truncated: z.boolean(),
  search_time_ms: z.number(),
});
export type RecallResponse = z.infer<typeof RecallResponse>;

/** One retrieval across memories, remediations and skills, served by the memory service. */
export const RecallRoutes = {
  recall: route(ServiceName.Memory, 'recall', z.object({ scope: Scope, query: RecallQuery }), RecallResponse),
} as const;
