import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { ShadowedSkill, SkillProblem, SkillSource, SkippedSkill } from '#contracts';
import { parseSkillFile } from './frontmatter.parser.js';
import { DEFAULT_DIGEST_LIMITS, digestFiles, IGNORED_DIRS, listSkillFiles, type DigestLimits } from './skill-files.js';
import { countLines, validateSkill, ValidationMode } from './skill.validator.js';
import { isInside, settle } from './path-containment.js';
import type { LoadedSkill } from './skill.types.js';

/** A folder skills are discovered in; earlier roots win over later ones. */
export interface SkillRoot {
  dir: string;
  source: SkillSource;
}

export interface DefaultRootsInput {
  projectDir?: string;
  homeDir?: string;
  bundledDir?: string;
  extraRoots?: string[];
}

/** Roots in precedence order: project, global, bundled, then extra roots from config. */
export function defaultRoots(input: DefaultRootsInput): SkillRoot[] {
  const roots: SkillRoot[] = [];
  if (input.projectDir) {
    for (const d of ['.alfred', '.agents', '.claude'])
      roots.push({ dir: resolve(input.projectDir, d, 'skills'), source: 'project' });
  }
  if (input.homeDir) {
    for (const d of ['.alfred', '.agents']) roots.push({ dir: resolve(input.homeDir, d, 'skills'), source: 'global' });
  }
  if (input.bundledDir) roots.push({ dir: resolve(input.bundledDir), source: 'bundled' });
  for (const extra of input.extraRoots ?? []) roots.push({ dir: resolve(extra), source: 'extra' });
  return roots;
}

export interface DiscoveryOptions {
  /** How deep below a root a skill folder may sit (root/a/SKILL.md is depth 1). */
  maxDepth?: number;
  /** Directories visited per root before discovery stops with a warning. */
  maxDirs?: number;
  digest?: DigestLimits;
  mode?: ValidationMode;
}

export interface DiscoveryResult {
  skills: LoadedSkill[];
  shadowed: ShadowedSkill[];
  skipped: SkippedSkill[];
  /** Problems about roots themselves (a bound reached, a symlink refused). */
  warnings: SkillProblem[];
}

/** Root-level markdown files that document a collection rather than being skills. */
const NOT_SKILL_FILES = new Set([
  'readme.md',
  'skill.md',
  'changelog.md',
  'license.md',
  'contributing.md',
  'agents.md',
  'claude.md',
]);

/** A SKILL.md or direct `*.md` candidate, with the name its frontmatter must carry. */
export interface SkillCandidate {
  file: string;
  dir: string;
  expectedName: string;
  kind: 'folder' | 'file';
}

/** How deep below a root discovery looks for skill folders by default (root/a/SKILL.md is depth 1). */
export const DISCOVERY_MAX_DEPTH = 4;

/** Finds skill files under one root without reading them; never throws. */
export async function findSkillCandidates(rootDir: string, options: DiscoveryOptions = {}) {
  const maxDepth = options.maxDepth ?? DISCOVERY_MAX_DEPTH;
  const maxDirs = options.maxDirs ?? 2000;
  const candidates: SkillCandidate[] = [];
  const warnings: SkillProblem[] = [];
  const realRoot = await realpath(rootDir).catch(() => null);
  if (!realRoot) return { candidates, warnings };
  const visited = new Set<string>();
  let capped = false;
  const warn = (file: string, message: string): void =>
    void warnings.push({ severity: 'warning', field: 'discovery', message, file });

  const walk = async (dir: string, depth: number): Promise<void> => {
    const real = await realpath(dir).catch(() => null);
    if (!real || visited.has(real)) return;
    if (visited.size >= maxDirs) {
      if (!capped) warn(rootDir, `stopped after ${maxDirs} directories; the rest of the root was not scanned`);
      capped = true;
      return;
    }
    visited.add(real);
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: Error) => {
      warn(dir, `cannot read directory: ${err.message}`);
      return [];
    });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const skillMd = depth > 0 ? entries.find((e) => e.name === 'SKILL.md') : undefined;
    const skillMdKind = skillMd ? await entryKind(skillMd, join(dir, 'SKILL.md'), realRoot) : 'other';
    if (skillMdKind === 'outside') warn(join(dir, 'SKILL.md'), 'symlink points outside its root; not followed');
    if (skillMdKind === 'file') {
      candidates.push({ file: join(dir, 'SKILL.md'), dir, expectedName: basename(dir), kind: 'folder' });
      return;
    }
    for (const entry of entries) {
      const abs = join(dir, entry.name);
      const kind = await entryKind(entry, abs, realRoot);
      if (kind === 'outside') warn(abs, 'symlink points outside its root; not followed');
      else if (kind === 'dir' && !IGNORED_DIRS.has(entry.name)) {
        if (depth + 1 <= maxDepth) await walk(abs, depth + 1);
        else if (depth + 1 === maxDepth + 1) warn(abs, `deeper than ${maxDepth} levels below ${rootDir}; not scanned`);
      } else if (
        kind === 'file' &&
        depth === 0 &&
        entry.name.endsWith('.md') &&
        !NOT_SKILL_FILES.has(entry.name.toLowerCase())
      ) {
        candidates.push({ file: abs, dir, expectedName: entry.name.slice(0, -3), kind: 'file' });
      }
    }
  };
  await walk(rootDir, 0);
  return { candidates, warnings };
}

type EntryKind = 'dir' | 'file' | 'outside' | 'other';

async function entryKind(
  entry: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean },
  abs: string,
  realRoot: string,
): Promise<EntryKind> {
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  if (!entry.isSymbolicLink()) return 'other';
  // Symlinked skill folders are followed only while their real path stays inside the root.
  const target = await realpath(abs).catch(() => null);
  if (!target) return 'other';
  if (!isInside(realRoot, target)) return 'outside';
  const info = await stat(target).catch(() => null);
  return info?.isDirectory() ? 'dir' : info?.isFile() ? 'file' : 'other';
}

/** A SKILL.md larger than this is skipped with the reason: its description would otherwise reach every index. */
export const SKILL_FILE_MAX_BYTES = 256 * 1024;

/** Loads one candidate leniently (or strictly); returns the skill or why it was skipped. */
export async function loadCandidate(candidate: SkillCandidate, root: SkillRoot, options: DiscoveryOptions = {}) {
  const size = (await stat(candidate.file).catch(() => null))?.size ?? 0;
  if (size > SKILL_FILE_MAX_BYTES) {
    const message =
      `SKILL.md is ${size} bytes; at most ${SKILL_FILE_MAX_BYTES} are read (long material ` +
      `belongs in resource files)`;
    return {
      skipped: {
        path: candidate.file,
        reason: message,
        problems: [{ severity: 'warning', field: 'file', message, file: candidate.file } satisfies SkillProblem],
      } satisfies SkippedSkill,
    };
  }
  const read = await settle(readFile(candidate.file, 'utf8'));
  if (!read.ok) {
    const problem: SkillProblem = {
      severity: 'warning',
      field: 'file',
      message: `cannot read: ${read.error.message}`,
      file: candidate.file,
    };
    return { skipped: { path: candidate.file, reason: problem.message, problems: [problem] } satisfies SkippedSkill };
  }
  const text = read.value;
  const parsed = parseSkillFile(text, candidate.file);
  const mode = options.mode ?? ValidationMode.Lenient;
  const result = validateSkill(parsed, { file: candidate.file, expectedName: candidate.expectedName, mode });
  if (result.skipReason || result.name === null || result.description === null) {
    const reason = result.skipReason ?? 'no usable name or description';
    return { skipped: { path: candidate.file, reason, problems: result.problems } satisfies SkippedSkill };
  }
  const files =
    candidate.kind === 'folder'
      ? (
          await listSkillFiles(candidate.dir, {
            maxFiles: (options.digest ?? DEFAULT_DIGEST_LIMITS).maxFiles,
            maxDepth: 8,
          })
        ).files
      : [{ path: basename(candidate.file), abs: candidate.file, size: Buffer.byteLength(text) }];
  const digest = await digestFiles(files, options.digest);
  const f = result.fields;
  const skill: LoadedSkill = {
    name: result.name,
    description: result.description,
    source: root.source,
    root: root.dir,
    dir: candidate.kind === 'folder' ? candidate.dir : dirname(candidate.file),
    location: candidate.file,
    kind: candidate.kind,
    digest,
    version: digest.slice(0, 12),
    ...(f.license !== undefined ? { license: f.license } : {}),
    ...(f.compatibility !== undefined ? { compatibility: f.compatibility } : {}),
    ...(f.metadata !== undefined ? { metadata: f.metadata } : {}),
    ...(f.allowedTools !== undefined ? { allowed_tools: f.allowedTools } : {}),
    body: parsed.body,
    body_line: parsed.bodyLine,
    body_lines: countLines(parsed.body),
    warnings: result.problems,
  };
  return { skill };
}

const LOAD_CONCURRENCY = 32;

/** Discovers every skill under the roots; higher roots shadow same-named skills of lower ones. Never throws. */
export async function discoverSkills(roots: SkillRoot[], options: DiscoveryOptions = {}): Promise<DiscoveryResult> {
  const byName = new Map<string, LoadedSkill>();
  const result: DiscoveryResult = { skills: [], shadowed: [], skipped: [], warnings: [] };
  for (const root of roots) {
    const { candidates, warnings } = await findSkillCandidates(root.dir, options);
    result.warnings.push(...warnings);
    const loadedAll: Awaited<ReturnType<typeof loadCandidate>>[] = [];
    for (let i = 0; i < candidates.length; i += LOAD_CONCURRENCY) {
      const batch = candidates.slice(i, i + LOAD_CONCURRENCY);
      loadedAll.push(...(await Promise.all(batch.map((c) => loadCandidate(c, root, options)))));
    }
    for (const loaded of loadedAll) {
      if (loaded.skipped) {
        result.skipped.push(loaded.skipped);
        continue;
      }
      const skill = loaded.skill;
      const winner = byName.get(skill.name);
      if (winner) result.shadowed.push({ name: skill.name, path: skill.location, shadowed_by: winner.location });
      else byName.set(skill.name, skill);
    }
  }
  result.skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return result;
}
