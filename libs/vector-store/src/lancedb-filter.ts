import { assertValidCondition } from './collection-spec.js';
import { fieldColumn } from './lancedb-rows.js';
import { sqlIdent, sqlIn, sqlLiteral, sqlString } from './sql.js';
import type { CollectionSpec, Condition, DocScope, Filter } from './vector-store.js';

/**
 * The hard scope prefilter every query carries. Rows are found through the agent's index and the tenant is checked on
 * those rows only (`concat` keeps it out of the index): one tenant's index entry lists every row of that tenant — the
 * whole table in a one-tenant deployment — and intersecting with it doubled a cold scope's read at a million rows
 * (loading it first took ~0.4 s under the store's bounded index cache).
 */
export function scopeWhere(scope: DocScope): string {
  return `agent = ${sqlString(scope.agent)} AND concat(tenant, '') = ${sqlString(scope.tenant)}`;
}

function conditionSql(spec: CollectionSpec, c: Condition): string {
  assertValidCondition(spec, c);
  const column = sqlIdent(fieldColumn(c.field));
  switch (c.op) {
    case 'eq':
      // booleans are stored as Int8 0/1 (see lancedb-rows.ts)
      return `${column} = ${typeof c.value === 'boolean' ? Number(c.value) : sqlLiteral(c.value)}`;
    case 'ne':
      return (
        `(${column} IS NULL OR ${column} != ` +
        `${typeof c.value === 'boolean' ? Number(c.value) : sqlLiteral(c.value)})`
      );
    case 'contains':
      return `array_has_any(${column}, [${sqlString(c.value)}])`;
    case 'gte':
      return `${column} >= ${sqlLiteral(c.value)}`;
    case 'lte':
      return `${column} <= ${sqlLiteral(c.value)}`;
  }
}

/** Scope plus every condition, ANDed. */
export function filterWhere(spec: CollectionSpec, filter: Filter): string {
  return [scopeWhere(filter), ...(filter.where ?? []).map((c) => conditionSql(spec, c))].join(' AND ');
}

export function idsWhere(scope: DocScope, ids: readonly string[]): string {
  return `${scopeWhere(scope)} AND ${sqlIn('id', ids)}`;
}
