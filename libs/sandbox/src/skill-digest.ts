import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const MAX_FILES = 256;

/** `sha256:<hex>` over every regular file of a skill folder (sorted relative paths and contents); symlinks are skipped. */
export async function skillDigest(skillDir: string): Promise<string> {
  const entries = await readdir(skillDir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(skillDir, path.join(entry.parentPath, entry.name)))
    .sort();
  const hash = createHash('sha256');
  for (const file of files.slice(0, MAX_FILES)) {
    hash.update(`${file}\0`);
    hash.update(await readFile(path.join(skillDir, file)));
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}
