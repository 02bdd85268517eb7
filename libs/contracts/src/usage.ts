import { z } from 'zod';
import { AgentName, Scope } from './common.js';
import { route, ServiceName } from './route.js';

/** Disk use against a quota, in bytes (allocated on disk, as `du` counts). */
export const DiskUse = z.object({ used_bytes: z.int().nonnegative(), quota_bytes: z.int().positive() });
export type DiskUse = z.infer<typeof DiskUse>;

/** A tenant's agent workspaces: together, and each against the per-workspace quota. */
export const WorkspacesUsage = DiskUse.extend({
  agents: z.array(DiskUse.extend({ agent: AgentName })),
});
export type WorkspacesUsage = z.infer<typeof WorkspacesUsage>;

/** `GET /usage`: what the caller's tenant holds on disk, and its quotas. `null` where that service is not running. */
export const TenantUsage = z.object({
  tenant: z.string(),
  workspaces: WorkspacesUsage.nullable(),
  skill_data: DiskUse.nullable(),
});
export type TenantUsage = z.infer<typeof TenantUsage>;

export const UsageRoutes = {
  workspaces: route(
    ServiceName.AgentRuntime,
    'workspace-usage',
    z.object({ tenant: Scope.shape.tenant }),
    WorkspacesUsage,
  ),
  skillData: route(ServiceName.SkillRunner, 'skill-data-usage', z.object({ tenant: Scope.shape.tenant }), DiskUse),
};
