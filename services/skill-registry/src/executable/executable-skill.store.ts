import { randomUUID } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  EXECUTABLE_SKILL_FILES_MAX_BYTES,
  EXECUTABLE_SKILL_FILES_MAX_COUNT,
  type ExecutableSkillSource,
} from '#contracts';
import { readSkillFiles, type SkillFileBytes } from '#sandbox';

/** A skill folder as found on disk: its files in memory, or why they could not be read. */
export interface SkillFolder {
  readonly id: string;
  readonly source: ExecutableSkillSource;
  /** The tenant a managed skill belongs to; bundled skills belong to none (shared, read-only). */
  readonly owner?: string;
  readonly dir: string;
  readonly files?: SkillFileBytes[];
  readonly problem?: string;
  readonly modifiedAt: Date;
  /** Installed from git: the version the tenant consented to run, if any. */
  readonly installed?: InstalledMark;
}

/** What the store keeps beside a skill installed from git (outside its folder, so its digest is the repository's). */
export interface InstalledMark {
  readonly consentedDigest?: string;
}

/** The marks of installed skills live in `tenants/<tenant>/.installed/<id>.json` (a dot folder is never a skill). */
const MARKS = '.installed';

const isErrno = (err: unknown, ...codes: string[]) => codes.includes((err as NodeJS.ErrnoException).code ?? '');

/** A tenant's folder name (any tenant id, no path tricks). */
const segment = (tenant: string) => encodeURIComponent(tenant).replace(/\./g, '%2E');

/**
 * The executable-skill folders on disk: a managed (writable) root with one folder per tenant
 * (`tenants/<tenant>/<id>`; folders placed directly under the root are shared and read-only)
 * and an optional bundled (read-only, shared) root.
 */
export class ExecutableSkillStore {
  constructor(
    private readonly managedDir: string,
    private readonly bundledDir?: string,
  ) {}

  /** Every folder with a skill.json in the bundled root, then every folder in the managed root. */
  async scan(): Promise<SkillFolder[]> {
    await mkdir(this.managedDir, { recursive: true });
    const bundled = this.bundledDir ? await this.folders(this.bundledDir, 'bundled', true) : [];
    // Folders an operator placed directly in the managed root are on-disk skills: shared and read-only, like bundled
    // ones.
    const onDisk = (await this.folders(this.managedDir, 'managed', false)).filter((f) => f.id !== 'tenants');
    const owned: SkillFolder[] = [];
    for (const seg of await readdir(path.join(this.managedDir, 'tenants')).catch(() => [] as string[])) {
      const owner = decodeURIComponent(seg);
      for (const f of await this.folders(path.join(this.managedDir, 'tenants', seg), 'managed', false))
        owned.push(await this.marked({ ...f, owner }));
    }
    return [...bundled, ...onDisk, ...owned];
  }

  /** Reads a folder again (after a change); `owner` is kept as it was. */
  async reread(folder: Pick<SkillFolder, 'id' | 'source' | 'dir' | 'owner'>): Promise<SkillFolder> {
    const read = await this.readFolder(folder.id, folder.source, folder.dir);
    return folder.owner === undefined ? read : this.marked({ ...read, owner: folder.owner });
  }

  /** Records (or, with undefined, forgets) that a tenant's skill came from git and which version it may run. */
  async writeInstalled(tenant: string, id: string, mark: InstalledMark | undefined): Promise<void> {
    const file = this.markFile(tenant, id);
    if (mark === undefined) return rm(file, { force: true });
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(mark));
    await rename(temp, file);
  }

  /**
   * Writes a tenant's skill folder exactly as given (a folder it replaces is moved aside whole): `undo` puts the
   * previous one back, `done` drops it.
   */
  async put(
    tenant: string,
    id: string,
    files: ReadonlyMap<string, Buffer>,
  ): Promise<{ undo: () => Promise<void>; done: () => Promise<void> }> {
    const staging = await this.stage(Object.fromEntries(files));
    const target = this.dirFor(tenant, id);
    const trash = path.join(this.managedDir, `.trash-${randomUUID()}`);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      const replaced = await rename(target, trash).then(
        () => true,
        (err: unknown) => {
          if (isErrno(err, 'ENOENT')) return false;
          throw err;
        },
      );
      await rename(staging, target);
      return {
        undo: async () => {
          await rm(target, { recursive: true, force: true });
          if (replaced) await rename(trash, target);
        },
        done: () => rm(trash, { recursive: true, force: true }),
      };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private markFile(tenant: string, id: string): string {
    return path.join(this.managedDir, 'tenants', segment(tenant), MARKS, `${id}.json`);
  }

  private async marked(folder: SkillFolder): Promise<SkillFolder> {
    let text: string;
    try {
      text = await readFile(this.markFile(folder.owner!, folder.id), 'utf8');
    } catch {
      return folder;
    }
    const mark = JSON.parse(text) as InstalledMark;
    return {
      ...folder,
      installed: typeof mark.consentedDigest === 'string' ? { consentedDigest: mark.consentedDigest } : {},
    };
  }

  /** Where a new managed skill of `tenant` is written. */
  dirFor(tenant: string, id: string): string {
    return path.join(this.managedDir, 'tenants', segment(tenant), id);
  }

  /** Writes a new managed skill folder; false if one with that id already exists. */
  async create(tenant: string, id: string, files: Record<string, string>): Promise<boolean> {
    const staging = await this.stage(files);
    const target = this.dirFor(tenant, id);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      if (await exists(target)) return false;
      await rename(staging, target);
      return true;
    } catch (err) {
      if (isErrno(err, 'EEXIST', 'ENOTEMPTY')) return false;
      throw err;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Replaces the given files of a managed skill; the folder is swapped, never half-written. */
  async replace(dir: string, files: Record<string, string>): Promise<void> {
    const current = await readSkillFiles(dir);
    const merged = Object.fromEntries(current.map((f) => [f.path, Buffer.from(f.bytes)] as [string, string | Buffer]));
    const staging = await this.stage({ ...merged, ...files });
    const trash = path.join(this.managedDir, `.trash-${randomUUID()}`);
    try {
      await rename(dir, trash);
      await rename(staging, dir);
    } finally {
      await rm(staging, { recursive: true, force: true });
      await rm(trash, { recursive: true, force: true });
    }
  }

  async remove(dir: string): Promise<void> {
    const trash = path.join(this.managedDir, `.trash-${randomUUID()}`);
    await rename(dir, trash);
    await rm(trash, { recursive: true, force: true });
  }

  private async stage(files: Record<string, string | Buffer>): Promise<string> {
    const staging = path.join(this.managedDir, `.staging-${randomUUID()}`);
    await mkdir(staging, { recursive: true });
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(staging, name)), { recursive: true });
      await writeFile(path.join(staging, name), content);
    }
    return staging;
  }

  private async folders(root: string, source: ExecutableSkillSource, needsManifest: boolean): Promise<SkillFolder[]> {
    let entries: Dirent[];
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
      throw err;
    }
    const found: SkillFolder[] = [];
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dir = path.join(root, entry.name);
      if (needsManifest && !(await exists(path.join(dir, 'skill.json')))) continue;
      found.push(await this.readFolder(entry.name, source, dir));
    }
    return found;
  }

  private async readFolder(id: string, source: ExecutableSkillSource, dir: string): Promise<SkillFolder> {
    const modifiedAt = (await stat(dir).catch(() => undefined))?.mtime ?? new Date();
    try {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      const count = entries.filter((e) => e.isFile()).length;
      if (count > EXECUTABLE_SKILL_FILES_MAX_COUNT) {
        return {
          id,
          source,
          dir,
          modifiedAt,
          problem: `the folder has ${count} files; at most ${EXECUTABLE_SKILL_FILES_MAX_COUNT} are allowed`,
        };
      }
      const files = await readSkillFiles(dir);
      const bytes = files.reduce((sum, f) => sum + f.bytes.byteLength, 0);
      if (bytes > EXECUTABLE_SKILL_FILES_MAX_BYTES) {
        return {
          id,
          source,
          dir,
          modifiedAt,
          problem: `the folder holds ${bytes} bytes; at most ${EXECUTABLE_SKILL_FILES_MAX_BYTES} are allowed`,
        };
      }
      return { id, source, dir, modifiedAt, files };
    } catch (err) {
      return { id, source, dir, modifiedAt, problem: `the folder cannot be read: ${(err as Error).message}` };
    }
  }
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined)) !== undefined;
}
