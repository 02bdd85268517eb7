import { writerConditions, type Provenance, type Scope, type TrustMark, type Writer } from '#contracts';
import { describeReasons, detectInjection } from '#content-safety';
import type { Condition, FieldValue } from '#vector-store';

/**
 * Who wrote a record and the injection check's mark: fields of the record itself (memories, checkpoints,
 * remediations), written in the same row and commit as the rest of it.
 */
export const PROVENANCE_FIELDS = {
  written_session: 'string',
  written_turn: 'string',
  written_key: 'string',
  written_via: 'string',
  written_source: 'string',
  written_at: 'string',
  flagged: 'boolean',
  /** The mark's reasons as JSON text: shown, never filtered on. */
  flag_reasons: 'string',
} as const;

/** What is kept about a record's writing. */
export interface WrittenBy {
  readonly writer: Writer;
  readonly written_at: string;
  readonly trust: TrustMark;
}

/** The filters lists and searches accept on provenance and trust. */
export interface ProvenanceQuery {
  readonly written_session?: string | undefined;
  readonly written_via?: string | undefined;
  readonly written_key?: string | undefined;
  readonly written_source?: string | undefined;
  readonly flagged?: boolean | undefined;
}

/** The injection check of one text: its mark, with reasons when flagged. */
export function trustOf(text: string): TrustMark {
  const reasons = describeReasons(detectInjection(text));
  return { flagged: reasons.length > 0, reasons };
}

export function writtenBy(writer: Writer | undefined, at: string, checked: string): WrittenBy {
  return { writer: writer ?? {}, written_at: at, trust: trustOf(checked) };
}

export function provenanceFields(w: WrittenBy | undefined): Record<string, FieldValue> {
  return {
    written_session: w?.writer.session ?? null,
    written_turn: w?.writer.turn ?? null,
    written_key: w?.writer.key ?? null,
    written_via: w?.writer.via ?? null,
    written_source: w?.writer.source ?? null,
    written_at: w?.written_at ?? null,
    flagged: w?.trust.flagged ?? null,
    flag_reasons: w ? JSON.stringify(w.trust.reasons) : null,
  };
}

/** The record's writing as stored; undefined for records written before provenance was kept. */
export function writtenByOf(fields: Readonly<Record<string, FieldValue>>): WrittenBy | undefined {
  if (typeof fields.written_at !== 'string' || !fields.written_at) return undefined;
  const text = (k: string) =>
    typeof fields[k] === 'string' && fields[k] ? { [k.slice('written_'.length)]: fields[k] as string } : {};
  const reasons = typeof fields.flag_reasons === 'string' ? (JSON.parse(fields.flag_reasons) as unknown) : [];
  return {
    writer: {
      ...text('written_session'),
      ...text('written_turn'),
      ...text('written_key'),
      ...text('written_via'),
      ...text('written_source'),
    },
    written_at: fields.written_at,
    trust: { flagged: fields.flagged === true, reasons: Array.isArray(reasons) ? reasons.map(String) : [] },
  };
}

/** The additional fields reads show: `provenance` and `trust`, when the record has them. */
export function provenanceView(scope: Scope, w: WrittenBy | undefined): { provenance?: Provenance; trust?: TrustMark } {
  if (!w) return {};
  return {
    provenance: { tenant: scope.tenant, agent: scope.agent, ...w.writer, written_at: w.written_at },
    trust: w.trust,
  };
}

/** Provenance filters as conditions of the record's own query: exact, in the store. */
export function provenanceConditions(q: ProvenanceQuery): Condition[] {
  const where: Condition[] = writerConditions(q).map((c) => ({
    field: `written_${c.field}`,
    op: 'eq' as const,
    value: c.value,
  }));
  // Records written before provenance was kept have no mark: unflagged, as `flagged=false` (recall) must find them.
  if (q.flagged !== undefined)
    where.push(q.flagged ? { field: 'flagged', op: 'eq', value: true } : { field: 'flagged', op: 'ne', value: true });
  return where;
}
