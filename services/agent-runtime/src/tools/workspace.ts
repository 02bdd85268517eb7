import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Scope } from '#contracts';
import { Metrics } from '#metrics';
import { quotaMessage, WORKSPACE_QUOTA, type DiskQuota } from '#sandbox';
import { safeSegment } from '#sessions';

/** The agent's workspace folder: `<root>/<tenant>/<agent>/`. */
export function workspaceDirOf(root: string, scope: Scope): string {
  return join(resolve(root), safeSegment(scope.tenant), scope.agent);
}

/** How bash sees the workspace (its folder and HOME in the sandbox); file tools accept the same spelling. */
export const WORKSPACE_INSIDE = '/workspace';

/** A path refused because it leaves the workspace; the model sees the message. */
export class OutsideWorkspaceError extends Error {}

/**
 * A write refused because the workspace (or its tenant's workspaces) is at its disk quota; the model sees the message.
 */
export class WorkspaceQuotaError extends Error {}

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && !rel.startsWith(sep));
}

/**
 * An agent's confined folder. Paths resolve against it; the real path (symlinks followed) of the target, or of
 * its nearest existing ancestor for a file yet to be written, must lie inside the workspace's real path.
 */
export class Workspace {
  private real: string | undefined;

  constructor(
    readonly dir: string,
    private readonly quota?: DiskQuota,
  ) {}

  /**
   * Runs `write` (which makes `target` hold `bytes`) only if what it adds fits the disk quota, and counts it. A write
   * that shrinks or keeps a file's size always passes: freeing space must stay possible.
   */
  async admit(target: string, bytes: number, write: () => Promise<void>): Promise<void> {
    if (!this.quota) return write();
    const before = (await lstat(target).catch(() => undefined))?.size ?? 0;
    const added = bytes - before;
    if (added > 0) {
      const state = await this.quota.state(dirname(this.dir), this.dir);
      if (added > state.remaining) Metrics.diskQuotaRefusals.inc({ area: 'workspace' });
      if (added > state.remaining)
        throw new WorkspaceQuotaError(
          `write refused: it adds ${added} bytes past the ${quotaMessage(state, WORKSPACE_QUOTA)}`,
        );
    }
    await write();
    this.quota.noted(dirname(this.dir), this.dir, added);
  }

  async root(): Promise<string> {
    if (!this.real) {
      await mkdir(this.dir, { recursive: true });
      this.real = await realpath(this.dir);
    }
    return this.real;
  }

  /** The real path of an existing file inside the workspace. */
  async resolveExisting(path: string): Promise<string> {
    const root = await this.root();
    const lexical = this.lexical(root, path);
    this.check(root, lexical, path);
    const target = await realpath(lexical);
    this.check(root, target, path);
    return target;
  }

  /** Where a write lands: inside the workspace, parents created, never through a symlink that points out. */
  async resolveForWrite(path: string): Promise<string> {
    const root = await this.root();
    const target = this.lexical(root, path);
    this.check(root, target, path);
    let existing = target;
    for (;;) {
      const info = await lstat(existing).catch(() => undefined);
      if (info) break;
      existing = dirname(existing);
    }
    const real = await realpath(existing);
    this.check(root, real, path);
    if (existing !== target) {
      await mkdir(dirname(target), { recursive: true });
      this.check(root, await realpath(dirname(target)), path);
    }
    return existing === target ? real : target;
  }

  private lexical(root: string, path: string): string {
    const target = isAbsolute(path) ? resolve(path) : resolve(root, path);
    // `/workspace/notes.txt`, as bash sees it, is the workspace's notes.txt.
    const inside = relative(WORKSPACE_INSIDE, target);
    if (isAbsolute(path) && !inside.startsWith('..') && !isAbsolute(inside)) return join(root, inside);
    // A path that names the workspace by its configured (unresolved) spelling is the same place.
    const viaDir = relative(resolve(this.dir), target);
    if (isAbsolute(path) && !viaDir.startsWith('..') && !isAbsolute(viaDir)) return join(root, viaDir);
    return target;
  }

  private check(root: string, real: string, asked: string): void {
    if (!isInside(root, real)) {
      throw new OutsideWorkspaceError(
        `${asked} is outside the workspace (${WORKSPACE_INSIDE}); file tools work only inside it`,
      );
    }
  }
}
