import { z } from 'zod';

/** The request fields that may carry the tenant, in the order they are looked at. */
const TENANT_FIELDS = ['tenant', 'scope', 'caller'] as const;

/** The tenant a request acts for: `tenant`, `scope.tenant` or `caller.tenant`; undefined when it carries none. */
export function tenantOf(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.tenant === 'string') return p.tenant;
  for (const holder of [p.scope, p.caller]) {
    const tenant = holder && typeof holder === 'object' ? (holder as Record<string, unknown>).tenant : undefined;
    if (typeof tenant === 'string') return tenant;
  }
  return undefined;
}

/**
 * Whether a request schema requires a tenant (a required `tenant`, or a required `scope` / `caller` with a required
 * tenant).
 */
export function requiresTenant(schema: z.ZodType): boolean {
  if (!(schema instanceof z.ZodObject)) return false;
  const shape = schema.shape as Record<string, z.ZodType>;
  return TENANT_FIELDS.some((field) => {
    const value = shape[field];
    if (!value || value.safeParse(undefined).success) return false;
    if (field === 'tenant') return true;
    return (
      value instanceof z.ZodObject &&
      'tenant' in value.shape &&
      !(value.shape.tenant as z.ZodType).safeParse(undefined).success
    );
  });
}
