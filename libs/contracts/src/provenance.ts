import { z } from 'zod';

/** The client's own note of where content came from (`X-Alfred-Source` header: a URL or document name). */
export const SourceRef = z.string().trim().min(1).max(2000);

/**
 * Who wrote a record, as the gateway knew it: the agent's session and turn when the request carried the
 * scoped credential of a turn, the API key's name otherwise; the tool or skill that wrote (`via`); and the
 * client's optional `source`. The tenant and agent are the record's own scope.
 */
export const Writer = z.object({
  session: z.string().optional(),
  turn: z.string().optional(),
  /** The API key's name (`key-<fingerprint>`), or `open-loopback` on the keyless loopback API. */
  key: z.string().optional(),
  /**
   * The tool or skill that wrote it: `skill:remember` (X-Alfred-Skill), `tool:bash`, `rest`, `mcp:memory_record`,
   * `distill`, `learn`, `telegram`…
   */
  via: z.string().max(200).optional(),
  source: SourceRef.optional(),
});
export type Writer = z.infer<typeof Writer>;

/** A writer with the agent it wrote as, for records whose own scope is the tenant alone (runtime-created skills). */
export const ScopedWriter = Writer.extend({ agent: z.string() });
export type ScopedWriter = z.infer<typeof ScopedWriter>;

/** Provenance as reads show it: a field beside the memory API's own, which keep their names and shapes. */
export const Provenance = Writer.extend({ tenant: z.string(), agent: z.string(), written_at: z.string() });
export type Provenance = z.infer<typeof Provenance>;

/** The injection check's mark: flagged content is stored but kept out of automatic prompt recall. */
export const TrustMark = z.object({
  flagged: z.boolean(),
  /**
   * `family/rule at offset` for each pattern that matched (instruction, role-marker, tool-markup, invisible-unicode).
   */
  reasons: z.array(z.string()),
});
export type TrustMark = z.infer<typeof TrustMark>;

/** Filters on provenance and trust, accepted by GET /memories and GET /search. */
export const ProvenanceFilter = {
  written_session: z.string().min(1).max(200).optional(),
  written_via: z.string().min(1).max(200).optional(),
  written_key: z.string().min(1).max(200).optional(),
  written_source: SourceRef.optional(),
  /** true: only flagged memories; false: only unflagged ones (what automatic recall uses). */
  flagged: z
    .union([z.boolean(), z.enum(['true', 'false'])])
    .transform((v) => v === true || v === 'true')
    .optional(),
};
export const PROVENANCE_FILTER_KEYS = Object.keys(ProvenanceFilter) as Array<keyof typeof ProvenanceFilter>;

/**
 * The writer filters of GET /skills and GET /executable-skills: those of memories but `flagged` (skills carry no trust
 * mark).
 */
export const WriterFilter = {
  written_session: ProvenanceFilter.written_session,
  written_via: ProvenanceFilter.written_via,
  written_key: ProvenanceFilter.written_key,
  written_source: ProvenanceFilter.written_source,
};
export const WriterQuery = z.object(WriterFilter);
export type WriterQuery = z.infer<typeof WriterQuery>;

/** Each writer filter and the provenance row field it matches (memories' and skills' rows name them alike). */
const WRITER_FIELDS = {
  written_session: 'session',
  written_via: 'via',
  written_key: 'key',
  written_source: 'source',
} as const;

/** The writer filters a query names, as equality conditions on provenance row fields. */
export function writerConditions(
  q: Partial<WriterQuery> | undefined,
): Array<{ field: (typeof WRITER_FIELDS)[keyof typeof WRITER_FIELDS]; value: string }> {
  return (Object.keys(WRITER_FIELDS) as Array<keyof typeof WRITER_FIELDS>).flatMap((k) =>
    q?.[k] !== undefined ? [{ field: WRITER_FIELDS[k], value: q[k]! }] : [],
  );
}

/** Whether a query names any writer filter. */
export function hasWriterFilter(q: Partial<WriterQuery> | undefined): boolean {
  return writerConditions(q).length > 0;
}
