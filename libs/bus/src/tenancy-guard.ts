import { ErrorCode, tenantOf, type Route } from '#contracts';
import { AlfredError } from '#errors';

/**
 * Tenancy as structure: a request on a route that is not declared global must name its tenant. Both adapters call
 * this on both sides (before sending, and on the parsed request before the handler), so a caller that forgets —
 * or a peer that sends a tenant-less message — is refused by the bus, not by each handler's care.
 */
export function requireTenant(route: Route, payload: unknown): void {
  if (route.options.global) return;
  const tenant = tenantOf(payload);
  if (typeof tenant !== 'string' || tenant === '') {
    throw new AlfredError(
      ErrorCode.Internal,
      `a request on ${route.subject} must carry its tenant (the route is tenant-scoped)`,
    );
  }
}
