import { createHash } from 'node:crypto';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isInside } from './path-containment.js';

/** Folders never part of a skill's content. */
export const IGNORED_DIRS = new Set(['node_modules', '.git']);

export interface SkillFileEntry {
  /** Path relative to the skill folder, with `/` separators. */
  path: string;
  abs: string;
  size: number;
}

export interface ListOptions {
  maxFiles: number;
  maxDepth: number;
}

/**
 * Regular files under a skill folder, sorted by relative path. A symlinked file counts only when its
 * real path stays inside the folder; symlinked folders are not entered. The list stops at maxFiles.
 */
export async function listSkillFiles(
  dir: string,
  options: ListOptions,
): Promise<{ files: SkillFileEntry[]; truncated: boolean }> {
  const files: SkillFileEntry[] = [];
  let truncated = false;
  const realDir = await realpath(dir).catch(() => dir);
  const walk = async (current: string, depth: number): Promise<void> => {
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (files.length >= options.maxFiles) {
        truncated = true;
        return;
      }
      const abs = join(current, entry.name);
      if (entry.isDirectory() && !IGNORED_DIRS.has(entry.name) && depth < options.maxDepth) await walk(abs, depth + 1);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        if (entry.isSymbolicLink() && !isInside(realDir, await realpath(abs).catch(() => '/'))) continue;
        const info = await stat(abs).catch(() => null);
        if (info?.isFile()) files.push({ path: relative(dir, abs).split(sep).join('/'), abs, size: info.size });
      }
    }
  };
  await walk(dir, 0);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, truncated };
}

export interface DigestLimits {
  maxFiles: number;
  /** Files larger than this are hashed by path and size only. */
  maxFileBytes: number;
}

export const DEFAULT_DIGEST_LIMITS: DigestLimits = { maxFiles: 1000, maxFileBytes: 8 * 1024 * 1024 };

/** SHA-256 over sorted relative paths and contents; changes when any file of the skill does. */
export async function digestFiles(
  files: SkillFileEntry[],
  limits: DigestLimits = DEFAULT_DIGEST_LIMITS,
): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files.slice(0, limits.maxFiles)) {
    hash.update(`${file.path}\0${file.size}\0`);
    if (file.size <= limits.maxFileBytes) {
      const content = await readWhole(file.abs).catch(() => Buffer.from('\0unreadable'));
      hash.update(content);
    }
    hash.update('\0');
  }
  return hash.digest('hex');
}

async function readWhole(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

const SNIFF_BYTES = 8192;

/** Text means no NUL byte and valid UTF-8; a multi-byte character cut at the sample's end is not held against it. */
export function isBinary(sample: Buffer, complete: boolean): boolean {
  if (sample.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: !complete });
    return false;
  } catch {
    return true;
  }
}

/** Reads the start of a file to tell text from binary. */
export async function sniffBinary(path: string, size: number): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const length = Math.min(size, SNIFF_BYTES);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return isBinary(buffer.subarray(0, bytesRead), size <= SNIFF_BYTES);
  } finally {
    await handle.close();
  }
}
