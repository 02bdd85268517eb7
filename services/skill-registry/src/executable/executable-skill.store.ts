import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EXECUTABLE_SKILL_FILES_MAX_BYTES, EXECUTABLE_SKILL_FILES_MAX_COUNT, type ExecutableSkillSource } from '#contracts';
import { readSkillFiles, type SkillFileBytes } from '#sandbox';

/** A skill folder as found on disk: its files in memory, or why they could not be read. */
export interface SkillFolder {
  readonly id: string;
  readonly source: ExecutableSkillSource;
  readonly dir: string;
  readonly files?: SkillFileBytes[];
  readonly problem?: string;
  readonly modifiedAt: Date;
}

const isErrno = (err: unknown, ...codes: string[]) => codes.includes((err as NodeJS.ErrnoException).code ?? '');

/** The executable-skill folders on disk: a managed (writable) root and an optional bundled (read-only) root. */
export class ExecutableSkillStore {
  constructor(
    private readonly managedDir: string,
    private readonly bundledDir?: string,
  ) {}

  /** Every folder with a skill.json in the bundled root, then every folder in the managed root. */
  async scan(): Promise<SkillFolder[]> {
    await mkdir(this.managedDir, { recursive: true });
    const bundled = this.bundledDir ? await this.folders(this.bundledDir, 'bundled', true) : [];
    return [...bundled, ...(await this.folders(this.managedDir, 'managed', false))];
  }

  async read(id: string, source: ExecutableSkillSource): Promise<SkillFolder> {
    const dir = path.join(source === 'managed' ? this.managedDir : this.bundledDir!, id);
    return this.readFolder(id, source, dir);
  }

  /** Writes a new managed skill folder; false if one with that id already exists. */
  async create(id: string, files: Record<string, string>): Promise<boolean> {
    const staging = await this.stage(files);
    try {
      await mkdir(this.managedDir, { recursive: true });
      if (await exists(this.target(id))) return false;
      await rename(staging, this.target(id));
      return true;
    } catch (err) {
      if (isErrno(err, 'EEXIST', 'ENOTEMPTY')) return false;
      throw err;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Replaces the given files of a managed skill; the folder is swapped, never half-written. */
  async replace(id: string, files: Record<string, string>): Promise<void> {
    const current = await readSkillFiles(this.target(id));
    const merged = Object.fromEntries(current.map((f) => [f.path, Buffer.from(f.bytes)] as [string, string | Buffer]));
    const staging = await this.stage({ ...merged, ...files });
    const trash = path.join(this.managedDir, `.trash-${randomUUID()}`);
    try {
      await rename(this.target(id), trash);
      await rename(staging, this.target(id));
    } finally {
      await rm(staging, { recursive: true, force: true });
      await rm(trash, { recursive: true, force: true });
    }
  }

  async remove(id: string): Promise<void> {
    const trash = path.join(this.managedDir, `.trash-${randomUUID()}`);
    await rename(this.target(id), trash);
    await rm(trash, { recursive: true, force: true });
  }

  private target(id: string): string {
    return path.join(this.managedDir, id);
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
    let entries;
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
        return { id, source, dir, modifiedAt, problem: `the folder has ${count} files; at most ${EXECUTABLE_SKILL_FILES_MAX_COUNT} are allowed` };
      }
      const files = await readSkillFiles(dir);
      const bytes = files.reduce((sum, f) => sum + f.bytes.byteLength, 0);
      if (bytes > EXECUTABLE_SKILL_FILES_MAX_BYTES) {
        return { id, source, dir, modifiedAt, problem: `the folder holds ${bytes} bytes; at most ${EXECUTABLE_SKILL_FILES_MAX_BYTES} are allowed` };
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
