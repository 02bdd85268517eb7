import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** How much one folder (an agent's workspace) and all of one tenant's folders of an area may hold on disk. */
export interface DiskQuotaLimits {
  readonly folderBytes: number;
  readonly tenantBytes: number;
}

/** Disk use (allocated bytes) of a folder and of its tenant, against their quotas. */
export interface QuotaState {
  readonly folder: { readonly used: number; readonly quota: number };
  readonly tenant: { readonly used: number; readonly quota: number };
  /** What may still be added, by the tighter of the two (0 when either is full). */
  readonly remaining: number;
}

/** A call may pass its remaining quota by this much before it is stopped (kernel and poll granularity). */
export const QUOTA_MARGIN_BYTES = 8 * 1024 * 1024;
/** How long a tenant's measured total is trusted before its folders are walked again (other replicas write too). */
const TENANT_TTL_MS = 15_000;

/**
 * Disk quotas of one area (agents' workspaces, skills' data): folders live under `<root>/<tenant>/…`, and use is
 * what the file system has allocated (`st_blocks`), symlinks not followed. Nothing here deletes or truncates anything:
 * a quota only decides what may be added.
 */
export class DiskQuota {
  private readonly folders = new Map<string, number>();
  private readonly tenants = new Map<string, { bytes: number; at: number }>();

  constructor(readonly limits: DiskQuotaLimits) {}

  /** Walks `folder` now, and its tenant's folders when their total is older than a few seconds. */
  async state(tenantDir: string, folder?: string): Promise<QuotaState> {
    const previous = folder === undefined ? undefined : this.folders.get(folder);
    const folderUsed = folder === undefined ? 0 : await measureDisk(folder);
    if (folder !== undefined) this.folders.set(folder, folderUsed);
    let tenant = this.tenants.get(tenantDir);
    if (!tenant || Date.now() - tenant.at > TENANT_TTL_MS) {
      tenant = { bytes: await measureDisk(tenantDir), at: Date.now() };
      this.tenants.set(tenantDir, tenant);
    } else if (previous !== undefined) {
      tenant.bytes = Math.max(0, tenant.bytes + folderUsed - previous);
    }
    return this.stateOf(folderUsed, tenant.bytes);
  }

  /** Counts a change of known size (a file written by the service, a skill's write) without walking again. */
  noted(tenantDir: string, folder: string | undefined, deltaBytes: number): void {
    if (folder !== undefined && this.folders.has(folder))
      this.folders.set(folder, Math.max(0, this.folders.get(folder)! + deltaBytes));
    const tenant = this.tenants.get(tenantDir);
    if (tenant) tenant.bytes = Math.max(0, tenant.bytes + deltaBytes);
  }

  /** The last known total of every tenant measured here (for metrics). */
  knownTotal(): number {
    let total = 0;
    for (const { bytes } of this.tenants.values()) total += bytes;
    return total;
  }

  private stateOf(folderUsed: number, tenantUsed: number): QuotaState {
    const { folderBytes, tenantBytes } = this.limits;
    const remaining = Math.max(0, Math.min(folderBytes - folderUsed, tenantBytes - tenantUsed));
    return {
      folder: { used: folderUsed, quota: folderBytes },
      tenant: { used: tenantUsed, quota: tenantBytes },
      remaining,
    };
  }
}

/** Allocated bytes under `dir` (the folder itself included); a folder that does not exist holds 0. */
export async function measureDisk(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const next = pending.pop()!;
    const info = await lstat(next).catch(() => undefined);
    if (!info) continue;
    total += info.blocks * 512;
    if (!info.isDirectory()) continue;
    const entries = await readdir(next).catch(() => [] as string[]);
    for (const name of entries) pending.push(path.join(next, name));
  }
  return total;
}

/** `1.2 MiB`, `980 KiB`: sizes the way a person reads them. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${units[unit]}`;
}

/**
 * What each quota is called in messages: the folder's (`this workspace`), the tenant's (`this tenant's workspaces`).
 */
export interface QuotaNames {
  readonly folder: string;
  readonly tenant: string;
}

/** What the tenant or agent reads when a quota stops a write: which quota, how full, and what to do. */
export function quotaMessage(state: QuotaState, names: QuotaNames): string {
  const full = state.folder.quota - state.folder.used <= state.tenant.quota - state.tenant.used ? 'folder' : 'tenant';
  const { used, quota } = state[full];
  return `disk quota: ${names[full]} use ${formatBytes(used)} of ${formatBytes(quota)}; delete files to free space`;
}
