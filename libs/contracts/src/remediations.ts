import { z } from 'zod';
import { Provenance, ProvenanceFilter, TrustMark, Writer } from './provenance.js';
import { Scope, queryInt } from './common.js';
import { FeedbackBody, FeedbackCounts, FeedbackResult } from './feedback.js';
import { event, route, ServiceName } from './route.js';

export const REMEDIATION_TEXT_MAX = 20_000;

const Text = (what: string, max = REMEDIATION_TEXT_MAX) => z.string().trim().min(1, `${what} cannot be empty`).max(max);
const Tag = z.string().trim().min(1, 'tags cannot be empty strings').max(100);

/** POST /remediations body: an error as it was seen, and what fixed it. */
export const RemediationRecordBody = z.strictObject({
  error_message: Text('error_message'),
  stack: z.string().max(REMEDIATION_TEXT_MAX).optional(),
  tool: z.string().trim().min(1).max(200).optional(),
  tags: z.array(Tag).max(64).default([]),
  fix: Text('fix'),
  context: z.string().max(REMEDIATION_TEXT_MAX).optional(),
});
export type RemediationRecordBody = z.infer<typeof RemediationRecordBody>;

export const RemediationId = z.string().min(1).max(128);

/** A stored remediation; `signature` is the normalised error text it is searched by. */
export const Remediation = z.object({
  id: z.string(),
  error_message: z.string(),
  stack: z.string().optional(),
  tool: z.string().optional(),
  tags: z.array(z.string()),
  fix: z.string(),
  context: z.string().optional(),
  signature: z.string(),
  feedback: FeedbackCounts,
  created_at: z.string(),
  updated_at: z.string().optional(),
  /** Who wrote it and the injection check's mark (additional fields). */
  provenance: Provenance.optional(),
  trust: TrustMark.optional(),
});
export type Remediation = z.infer<typeof Remediation>;

/**
 * GET /remediations/search query: `q` is an error text, normalised like stored signatures; provenance filters as GET
 * /search.
 */
export const RemediationSearchQuery = z.strictObject({
  q: z.string().trim().min(1, 'Query cannot be empty').max(REMEDIATION_TEXT_MAX),
  limit: queryInt(1, 50, 5),
  min_score: z.coerce.number().min(0).max(1).default(0),
  tool: z.string().min(1).max(200).optional(),
  ...ProvenanceFilter,
});
export type RemediationSearchQuery = z.infer<typeof RemediationSearchQuery>;

export const RemediationSearchResponse = z.object({
  results: z.array(Remediation.extend({ score: z.number().min(0).max(1) })),
  query: z.string(),
  signature: z.string(),
  total: z.number().int().min(0),
  search_time_ms: z.number(),
});
export type RemediationSearchResponse = z.infer<typeof RemediationSearchResponse>;

export const REMEDIATION_STREAM = 'ALFRED_REMEDIATION';

/** One remediation change as kept on its stream. */
export const RemediationChange = z.object({
  kind: z.enum(['recorded', 'rated']),
  id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  at: z.string(),
  remediation: Remediation,
  feedback: FeedbackBody.optional(),
});
export type RemediationChange = z.infer<typeof RemediationChange>;

/** Remediation events; the remediation id follows the subject as one more token. */
export const RemediationEvents = {
  recorded: event('remediation', 'recorded', REMEDIATION_STREAM, RemediationChange),
  rated: event('remediation', 'rated', REMEDIATION_STREAM, RemediationChange),
} as const;

const scoped = <T extends z.ZodRawShape>(shape: T) => z.object({ scope: Scope, ...shape });
const M = ServiceName.Memory;

/** Remediations (error fixes), served by the memory service. */
export const RemediationRoutes = {
  record: route(
    M,
    'remediation-record',
    scoped({ remediation: RemediationRecordBody, writer: Writer.optional() }),
    Remediation,
  ),
  get: route(M, 'remediation-get', scoped({ id: RemediationId }), Remediation),
  search: route(M, 'remediation-search', scoped({ query: RemediationSearchQuery }), RemediationSearchResponse),
  feedback: route(M, 'remediation-feedback', scoped({ id: RemediationId, feedback: FeedbackBody }), FeedbackResult),
} as const;
