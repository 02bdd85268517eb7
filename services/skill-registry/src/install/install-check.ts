import { posix } from 'node:path';
import {
  EXECUTABLE_SKILL_FILES_MAX_BYTES,
  EXECUTABLE_SKILL_FILES_MAX_COUNT,
  type InstalledKind,
  type RefusalReason,
  type RefusedSkill,
  type SkillManifest,
  type SkillProblem,
} from '#contracts';
import { isAlfredError } from '#errors';
import { SKILL_FILE_MAX_BYTES, validateSkillText } from '#skills';
import { validCode, validManifest } from '../executable/executable-skill.catalog.js';
import { LINK_MODE } from './git.client.js';
import type { FolderEntry, TreeSkillFolder } from './repo-tree.js';

export interface InstallLimits {
  readonly maxFileBytes: number;
  readonly maxSkillBytes: number;
  readonly maxFiles: number;
}

/** A skill folder that passed every check: the files to write (links already turned into copies) and its parts. */
export interface CheckedSkill {
  readonly name: string;
  readonly path: string;
  readonly kinds: InstalledKind[];
  /** Path in the folder → the blob to write there. */
  readonly files: ReadonlyMap<string, string>;
  readonly manifest?: SkillManifest;
  readonly warnings: SkillProblem[];
}

export type CheckOutcome = { readonly ok: CheckedSkill } | { readonly refused: RefusedSkill };

/** Reads blobs by id (the fetched commit's). */
export type BlobReader = (oids: readonly string[]) => Promise<Map<string, Buffer>>;

const LFS_POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\n/;
const MAX_LINK_HOPS = 8;

/**
 * The checks a skill folder from a repository passes before it is installed — the same as for a skill created
 * through the API: SKILL.md by the strict Agent Skills validator, an executable part by the manifest and code checks
 * and the runner's file limits; plus what only a repository can bring: links that leave the folder (refused),
 * oversized files, submodules and Git LFS pointers (warned about: their content is never fetched).
 */
export async function checkSkillFolder(
  folder: TreeSkillFolder,
  read: BlobReader,
  limits: InstallLimits,
  createdBy: string,
): Promise<CheckOutcome> {
  const kinds = kindsOf(folder);
  const problems: SkillProblem[] = [];
  const warnings: SkillProblem[] = [];
  const refuse = (reason: RefusalReason): CheckOutcome => ({
    refused: { name: folder.name, path: folder.dir, kinds, reason, problems },
  });
  const files = await resolveFiles(folder, read, problems, warnings);
  if (problems.length > 0) return refuse('escape');
  sizeProblems(folder, files, limits, problems);
  if (problems.length > 0) return refuse('too_large');
  const wanted = [...files.entries()].filter(
    ([rel, e]) => rel === 'SKILL.md' || rel === 'skill.json' || rel === 'execute.ts' || e.size < 200,
  );
  const blobs = await read(wanted.map(([, e]) => e.oid));
  const text = (rel: string) => (files.has(rel) ? blobs.get(files.get(rel)!.oid)?.toString('utf8') : undefined);
  for (const [rel, e] of wanted)
    if (LFS_POINTER.test(blobs.get(e.oid)?.toString('utf8') ?? ''))
      warnings.push(
        problem(
          'warning',
          `${folder.dir}/${rel}`,
          'file',
          'a Git LFS pointer: LFS content is not fetched, the pointer is installed as it is',
        ),
      );
  const skillMd = text('SKILL.md');
  if (skillMd !== undefined) {
    const report = validateSkillText(skillMd, join(folder.dir, 'SKILL.md'), folder.name);
    problems.push(...report.errors);
    warnings.push(...report.warnings);
  }
  let manifest: SkillManifest | undefined;
  if (kinds.includes('executable')) manifest = checkExecutable(folder, files, text, createdBy, problems);
  if (problems.length > 0) return refuse('invalid');
  return {
    ok: {
      name: folder.name,
      path: folder.dir,
      kinds,
      files: new Map([...files].map(([rel, e]) => [rel, e.oid])),
      ...(manifest ? { manifest } : {}),
      warnings,
    },
  };
}

export function kindsOf(folder: TreeSkillFolder): InstalledKind[] {
  const has = (rel: string) => folder.entries.some((e) => e.rel === rel);
  return [...(has('SKILL.md') ? (['skill'] as const) : []), ...(has('skill.json') ? (['executable'] as const) : [])];
}

/**
 * The folder's files to write: regular files as they are, a link as a copy of the file it leads to inside the folder.
 * A link that leaves the folder (absolute, or `..` past its top, also through other links) is a problem; a link to a
 * folder or to nothing, and submodules, are left out with a warning.
 */
async function resolveFiles(
  folder: TreeSkillFolder,
  read: BlobReader,
  problems: SkillProblem[],
  warnings: SkillProblem[],
): Promise<Map<string, FolderEntry>> {
  const byRel = new Map(folder.entries.map((e) => [e.rel, e]));
  const links = folder.entries.filter((e) => e.mode === LINK_MODE);
  const targets = await read(links.map((l) => l.oid));
  const files = new Map<string, FolderEntry>();
  for (const entry of folder.entries) {
    const where = join(folder.dir, entry.rel);
    if (entry.type === 'commit')
      warnings.push(problem('warning', where, 'file', 'a submodule: submodules are not fetched'));
    else if (entry.mode !== LINK_MODE) files.set(entry.rel, entry);
    else {
      const followed = follow(entry, byRel, targets);
      if (followed.kind === 'file') files.set(entry.rel, { ...followed.entry, rel: entry.rel });
      else if (followed.kind === 'escape')
        problems.push(
          problem('error', where, 'symlink', `points outside its skill folder (${followed.target}); refused`),
        );
      else
        warnings.push(
          problem(
            'warning',
            where,
            'symlink',
            followed.kind === 'dir' ? 'links to a folder: not installed' : 'leads nowhere: not installed',
          ),
        );
    }
  }
  return files;
}

type Followed = { kind: 'file'; entry: FolderEntry } | { kind: 'escape'; target: string } | { kind: 'dir' | 'missing' };

function follow(link: FolderEntry, byRel: Map<string, FolderEntry>, targets: Map<string, Buffer>): Followed {
  let current = link;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    const target = targets.get(current.oid)?.toString('utf8') ?? '';
    const rel = posix.normalize(posix.join(posix.dirname(current.rel), target));
    if (target.startsWith('/') || rel === '..' || rel.startsWith('../')) return { kind: 'escape', target };
    const next = byRel.get(rel);
    if (!next) return [...byRel.keys()].some((k) => k.startsWith(`${rel}/`)) ? { kind: 'dir' } : { kind: 'missing' };
    if (next.mode !== LINK_MODE) return next.type === 'blob' ? { kind: 'file', entry: next } : { kind: 'missing' };
    current = next;
  }
  return { kind: 'missing' };
}

function sizeProblems(
  folder: TreeSkillFolder,
  files: Map<string, FolderEntry>,
  limits: InstallLimits,
  problems: SkillProblem[],
): void {
  let total = 0;
  for (const [rel, e] of files) {
    total += e.size;
    const max = rel === 'SKILL.md' ? Math.min(SKILL_FILE_MAX_BYTES, limits.maxFileBytes) : limits.maxFileBytes;
    if (e.size > max)
      problems.push(
        problem('error', join(folder.dir, rel), 'file', `is ${e.size} bytes; at most ${max} are installed`),
      );
  }
  if (files.size > limits.maxFiles)
    problems.push(
      problem(
        'error',
        folder.dir,
        'files',
        `the folder has ${files.size} files; at most ${limits.maxFiles} are installed`,
      ),
    );
  if (total > limits.maxSkillBytes)
    problems.push(
      problem(
        'error',
        folder.dir,
        'files',
        `the folder holds ${total} bytes; at most ${limits.maxSkillBytes} are installed`,
      ),
    );
}

/** skill.json and execute.ts as POST /executable-skills checks them, and the folder within what a runner is sent. */
function checkExecutable(
  folder: TreeSkillFolder,
  files: Map<string, FolderEntry>,
  text: (rel: string) => string | undefined,
  createdBy: string,
  problems: SkillProblem[],
): SkillManifest | undefined {
  const manifestFile = join(folder.dir, 'skill.json');
  const bytes = [...files.values()].reduce((n, e) => n + e.size, 0);
  if (files.size > EXECUTABLE_SKILL_FILES_MAX_COUNT)
    problems.push(
      problem(
        'error',
        folder.dir,
        'files',
        `an executable skill has at most ${EXECUTABLE_SKILL_FILES_MAX_COUNT} files (this one ${files.size})`,
      ),
    );
  if (bytes > EXECUTABLE_SKILL_FILES_MAX_BYTES)
    problems.push(
      problem(
        'error',
        folder.dir,
        'files',
        `an executable skill holds at most ${EXECUTABLE_SKILL_FILES_MAX_BYTES} bytes (this one ${bytes})`,
      ),
    );
  let raw: unknown;
  try {
    raw = JSON.parse(text('skill.json') ?? '');
  } catch (err) {
    problems.push(problem('error', manifestFile, 'skill.json', `is not JSON: ${(err as Error).message}`));
    return undefined;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(problem('error', manifestFile, 'skill.json', 'must be a JSON object'));
    return undefined;
  }
  const fields = raw as Record<string, unknown>;
  if (fields.id !== folder.name)
    problems.push(
      problem(
        'error',
        manifestFile,
        'id',
        `must equal its folder name "${folder.name}" (is ${JSON.stringify(fields.id)})`,
        lineOf(text('skill.json')!, 'id'),
      ),
    );
  let manifest: SkillManifest | undefined;
  try {
    manifest = validManifest({ name: fields.id, version: '1.0.0', createdBy, ...fields });
  } catch (err) {
    const issues = isAlfredError(err)
      ? ((err.details as { issues?: Array<{ path: string; message: string }> }).issues ?? [])
      : [];
    for (const i of issues)
      problems.push(
        problem(
          'error',
          manifestFile,
          i.path || 'skill.json',
          i.message,
          lineOf(text('skill.json')!, i.path.split('.')[0] ?? ''),
        ),
      );
  }
  const code = text('execute.ts');
  if (code === undefined)
    problems.push(
      problem(
        'error',
        join(folder.dir, 'execute.ts'),
        'execute.ts',
        'is missing: an executable skill runs its execute.ts',
      ),
    );
  else {
    try {
      validCode(code);
    } catch (err) {
      problems.push(problem('error', join(folder.dir, 'execute.ts'), 'code', (err as Error).message));
    }
  }
  return manifest;
}

/** The 1-based line of a top-level key in a JSON text, where it can be found. */
function lineOf(json: string, key: string): number | undefined {
  if (!key) return undefined;
  const at = json.search(new RegExp(`"${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*:`));
  return at < 0 ? undefined : json.slice(0, at).split('\n').length;
}

const join = (dir: string, rel: string) => (dir ? `${dir}/${rel}` : rel);

function problem(
  severity: SkillProblem['severity'],
  file: string,
  field: string,
  message: string,
  line?: number,
): SkillProblem {
  return { severity, field, message, file, ...(line === undefined ? {} : { line }) };
}
