import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { SkillParameter } from '#contracts';

export type JsonSchema = Record<string, unknown>;

/** Schemas that recurse (or recur) are documented once, under these names, in `components/schemas`. */
const NAMED = z.registry<{ id: string }>();
NAMED.add(SkillParameter, { id: 'SkillParameter' });
NAMED.add(SkillParameter.shape.default.unwrap(), { id: 'JsonValue' });

const LOCAL_REF = /^#\/\$defs\/(.+)$/;
const UNNAMED = /^__schema\d+$/;
const COMPONENTS = '#/components/schemas/';

/**
 * zod's JSON Schema (draft 2020-12, what OpenAPI 3.1 uses) for the schemas of one OpenAPI document. zod puts what a
 * schema recurses into in that schema's own `$defs` and refers to it as `#/$defs/…`; inside an OpenAPI document a
 * reference resolves against the document's root, which has no `$defs`. So every definition moves to
 * `components/schemas` under its name, and every reference to it is rewritten to point there.
 */
export class SchemaComponents {
  /** The document's `components/schemas`. */
  readonly schemas: Record<string, JsonSchema> = {};

  /** Requests are documented as clients send them (`input`: defaults make fields optional), answers as produced. */
  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const converted = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      metadata: NAMED,
    }) as JsonSchema;
    const { $schema: _, $defs, ...root } = converted;
    if (!$defs) return root;
    const defs = $defs as Record<string, JsonSchema>;
    const names = componentNames(defs);
    const rewrite = (node: unknown): unknown =>
      rewriteRefs(node, (local) => `${COMPONENTS}${names.get(local) ?? missing(local)}`);
    for (const [local, def] of Object.entries(defs))
      if (!isAlias(def, defs)) this.place(names.get(local)!, rewrite(def) as JsonSchema);
    return rewrite(root) as JsonSchema;
  }

  /** Documents `schema` under `name` in `components/schemas`. */
  define(name: string, schema: z.ZodType, io: 'input' | 'output'): void {
    this.place(name, this.convert(schema, io));
  }

  private place(name: string, schema: JsonSchema): void {
    const existing = this.schemas[name];
    // One name, one schema: a registered schema whose input and output forms differ needs a name for each.
    if (existing !== undefined && !isDeepStrictEqual(existing, schema))
      throw new Error(`two different schemas are documented as ${name}`);
    this.schemas[name] = schema;
  }
}

/**
 * Each local definition's component name: its registered name; an unnamed one (zod's `__schemaN`, the inner cycle
 * of a registered schema such as `z.json()`) takes the name of the registered alias that is only a reference to it.
 */
function componentNames(defs: Record<string, JsonSchema>): Map<string, string> {
  const names = new Map<string, string>();
  for (const [local, def] of Object.entries(defs)) {
    if (UNNAMED.test(local)) continue;
    names.set(local, local);
    const target = isAlias(def, defs) ? LOCAL_REF.exec(def.$ref as string)![1]! : undefined;
    if (target !== undefined && UNNAMED.test(target)) names.set(target, local);
  }
  for (const local of Object.keys(defs)) if (!names.has(local)) missing(local);
  return names;
}

/** A definition that is only a reference to another local definition. */
function isAlias(def: JsonSchema, defs: Record<string, JsonSchema>): boolean {
  if (Object.keys(def).length !== 1 || typeof def.$ref !== 'string') return false;
  const target = LOCAL_REF.exec(def.$ref)?.[1];
  return target !== undefined && UNNAMED.test(target) && target in defs;
}

function missing(local: string): never {
  throw new Error(`a recursive schema has no name (${local}): register it in NAMED (schema-components.ts)`);
}

function rewriteRefs(node: unknown, to: (local: string) => string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, to));
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      const local = key === '$ref' && typeof value === 'string' ? LOCAL_REF.exec(value)?.[1] : undefined;
      return [key, local === undefined ? rewriteRefs(value, to) : to(local)];
    }),
  );
}
