/** SQL literal and identifier helpers for LanceDB (DataFusion) filter strings. */

/** A single-quoted SQL string literal: quotes doubled; backslashes are literal in standard SQL strings. */
export function sqlString(value: string): string {
  if (value.includes('\u0000')) throw new RangeError('NUL characters are not allowed in filter values');
  return `'${value.replaceAll("'", "''")}'`;
}

/** A SQL literal for a filter value: strings quoted, finite numbers as-is, booleans as TRUE/FALSE. */
export function sqlLiteral(value: string | number | boolean): string {
  if (typeof value === 'string') return sqlString(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (!Number.isFinite(value)) throw new RangeError(`filter numbers must be finite, got ${value}`);
  return String(value);
}

/** A back-quoted identifier; names are validated elsewhere, this also refuses backquotes. */
export function sqlIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new RangeError(`invalid column name: ${name}`);
  return `\`${name}\``;
}

/** `col IN ('a', 'b')` for a non-empty list of strings. */
export function sqlIn(column: string, values: readonly string[]): string {
  return `${sqlIdent(column)} IN (${values.map(sqlString).join(', ')})`;
}
