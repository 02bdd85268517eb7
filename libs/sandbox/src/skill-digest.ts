import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const MAX_FILES = 256;

/** A skill file in memory: its POSIX-style path relative to the skill folder and its bytes. */
export interface SkillFileBytes {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/**
 * `sha256:<hex>` over every regular file of a skill folder (sorted relative paths and contents); symlinks are skipped.
 */
export async function skillDigest(skillDir: string): Promise<string> {
  return skillDigestOf(await readSkillFiles(skillDir));
}

/** The same digest over files already in memory (the registry serves exactly the bytes it hashed). */
export function skillDigestOf(files: readonly SkillFileBytes[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).slice(0, MAX_FILES)) {
    hash.update(`${file.path}\0`);
    hash.update(file.bytes);
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}

/** Every regular file under a skill folder (symlinks and other kinds skipped), sorted by path. */
export async function readSkillFiles(skillDir: string): Promise<SkillFileBytes[]> {
  const entries = await readdir(skillDir, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(skillDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  return Promise.all(
    paths.map(async (p) => ({ path: p, bytes: new Uint8Array(await readFile(path.join(skillDir, p))) })),
  );
}
