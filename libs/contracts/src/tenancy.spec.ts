import * as zod from 'zod';
import * as contracts from './index.js';
import { requiresTenant } from './tenancy.js';
import type { Route } from './route.js';

/**
 * Every route exported by #contracts, found by shape (a subject, both schemas and options), inside route tables too.
 */
function allRoutes(): Route[] {
  const found: Route[] = [];
  const visit = (value: unknown, depth: number) => {
    if (!value || typeof value !== 'object' || depth > 2) return;
    const v = value as Partial<Route>;
    if (typeof v.subject === 'string' && v.request && v.response && v.options) return void found.push(v as Route);
    for (const inner of Object.values(value)) visit(inner, depth + 1);
  };
  for (const exported of Object.values(contracts)) visit(exported, 0);
  for (const service of Object.values(contracts.ServiceName)) found.push(contracts.healthRoute(service));
  return found;
}

describe('tenancy of the route table', () => {
  const routes = allRoutes();

  it('should find the route table', () => {
    expect(routes.length).toBeGreaterThan(60);
  });

  it.each(routes.map((r) => [r.subject, r] as const))(
    '%s should require its tenant or be declared global',
    (_subject, r) => {
      expect(r.options.global === true || requiresTenant(r.request)).toBe(true);
    },
  );

  it('should keep global routes to the few that act on no tenant', () => {
    const globalVerbs = new Set(routes.filter((r) => r.options.global).map((r) => r.subject.split('.')[2]));
    expect([...globalVerbs].sort()).toEqual(['health', 'reindex']);
  });

  it('should refuse to define a route that forgets its tenant', () => {
    const { z } = zod;
    expect(() =>
      contracts.route(contracts.ServiceName.Memory, 'forgetful', z.object({ id: z.string() }), z.object({})),
    ).toThrow(/must require a tenant/);
    expect(() =>
      contracts.route(
        contracts.ServiceName.Memory,
        'optional-tenant',
        z.object({ tenant: z.string().optional() }),
        z.object({}),
      ),
    ).toThrow(/must require a tenant/);
  });
});
