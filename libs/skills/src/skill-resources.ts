import { open, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, type SkillResourceContent, type SkillResourceList } from '#contracts';
import { AlfredError } from '#errors';
import { isBinary, listSkillFiles, sniffBinary } from './skill-files.js';
import { isInside } from './path-containment.js';
import type { LoadedSkill } from './skill.types.js';

export interface ResourceLimits {
  /** Largest file readResource returns. */
  maxBytes: number;
  /** Most entries listResources returns. */
  maxEntries: number;
}

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { maxBytes: 1024 * 1024, maxEntries: 1000 };

/** Level 3: every file of the skill folder but its SKILL.md, with size and text/binary kind. */
export async function listResources(
  skill: LoadedSkill,
  limits: ResourceLimits = DEFAULT_RESOURCE_LIMITS,
): Promise<SkillResourceList> {
  if (skill.kind === 'file') return { name: skill.name, resources: [], truncated: false };
  const { files, truncated } = await listSkillFiles(skill.dir, { maxFiles: limits.maxEntries + 1, maxDepth: 8 });
  const others = files.filter((f) => f.path !== 'SKILL.md');
  const kept = others.slice(0, limits.maxEntries);
  const resources = await Promise.all(
    kept.map(async (f) => {
      const binary = await sniffBinary(f.abs, f.size).catch(() => true);
      return { path: f.path, size: f.size, kind: binary ? ('binary' as const) : ('text' as const) };
    }),
  );
  return { name: skill.name, resources, truncated: truncated || others.length > kept.length };
}

/** Refuses paths that could leave the folder before touching the file system. */
function checkRelativePath(relPath: string): void {
  const bad = (why: string) =>
    new AlfredError(ErrorCode.BadRequest, `invalid resource path "${relPath.replace(/\0/g, '\\0')}": ${why}`, {
      path: relPath,
    });
  if (relPath.length === 0) throw bad('empty');
  if (relPath.includes('\0')) throw bad('contains a NUL byte');
  if (/^([/\\]|[A-Za-z]:)/.test(relPath)) throw bad('must be relative to the skill folder');
  if (relPath.split(/[/\\]/).includes('..')) throw bad('must not contain ".."');
}

/** Level 3: one file inside the skill folder, resolved to its real path and checked for containment. */
export async function readResource(
  skill: LoadedSkill,
  relPath: string,
  limits: ResourceLimits = DEFAULT_RESOURCE_LIMITS,
): Promise<SkillResourceContent> {
  checkRelativePath(relPath);
  const notFound = () =>
    new AlfredError(ErrorCode.NotFound, `skill ${skill.name} has no resource ${relPath}`, {
      name: skill.name,
      path: relPath,
    });
  if (skill.kind === 'file') throw notFound();
  const folder = await realpath(skill.dir).catch(() => null);
  const target = folder ? await realpath(join(folder, relPath)).catch(() => null) : null;
  if (!folder || !target) throw notFound();
  if (!isInside(folder, target)) {
    throw new AlfredError(
      ErrorCode.Forbidden,
      `resource ${relPath} of skill ${skill.name} resolves outside the skill folder`,
      {
        name: skill.name,
        path: relPath,
      },
    );
  }
  const handle = await open(target, 'r').catch(() => null);
  if (!handle) throw notFound();
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notFound();
    // A hard link is the same file as one elsewhere (perhaps outside the folder): containment cannot be shown.
    if (info.nlink > 1) {
      throw new AlfredError(
        ErrorCode.Forbidden,
        `resource ${relPath} of skill ${skill.name} is a hard link; it is not served`,
        { name: skill.name, path: relPath },
      );
    }
    if (info.size > limits.maxBytes) {
      throw new AlfredError(
        ErrorCode.PayloadTooLarge,
        `resource ${relPath} is ${info.size} bytes; the limit is ${limits.maxBytes}`,
        {
          name: skill.name,
          path: relPath,
          size: info.size,
          limit: limits.maxBytes,
        },
      );
    }
    const content = await handle.readFile();
    const binary = isBinary(content, true);
    return {
      name: skill.name,
      path: relPath,
      size: content.length,
      encoding: binary ? 'base64' : 'utf8',
      content: content.toString(binary ? 'base64' : 'utf8'),
    };
  } finally {
    await handle.close();
  }
}
