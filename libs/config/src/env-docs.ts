import type { z } from 'zod';

/**
 * What a variable's schema says of it for the README's configuration table: `.describe()` gives its meaning, and a
 * default computed at start-up (a folder, a share of another setting) is named by `.meta({ shownDefault })`.
 */
export interface EnvDoc {
  readonly name: string;
  /** The default as the table shows it: `value`, a phrase for a computed one, or — for none. */
  readonly shown: string;
  readonly about: string;
}

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
}

/**
 * The default a schema applies when the variable is unset, or undefined for none. A default computed at start-up
 * comes out as this process computes it, so its schema names it with `shownDefault` instead.
 */
function defaultOf(schema: z.ZodType): { value: unknown } | undefined {
  for (let s: z.ZodType | undefined = schema; s; ) {
    const def = s._zod.def as unknown as Def;
    if (def.type === 'default') return { value: (def as unknown as { defaultValue: unknown }).defaultValue };
    s = def.type === 'optional' || def.type === 'nullable' ? def.innerType : def.type === 'pipe' ? def.in : undefined;
  }
  return undefined;
}

/** No value to show: unset, an empty string, an empty list or map. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (value instanceof Map) return value.size === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/** A variable's documentation from its schema; throws when the schema does not say what the variable means. */
export function envDoc(name: string, schema: z.ZodType): EnvDoc {
  const meta = (schema.meta() ?? {}) as { description?: string; shownDefault?: string };
  if (!meta.description) throw new Error(`${name}: its schema has no description (.describe() or .meta())`);
  const found = defaultOf(schema);
  const shown = meta.shownDefault ?? (!found || isEmpty(found.value) ? '—' : `\`${String(found.value)}\``);
  return { name, shown, about: meta.description };
}
