import { posix } from 'node:path';
import { ErrorCode, type SkillProblem } from '#contracts';
import { AlfredError } from '#errors';
import { DISCOVERY_MAX_DEPTH, IGNORED_DIRS } from '#skills';
import { LINK_MODE, type TreeEntry } from './git.client.js';

/** A file of a skill folder: its path inside the folder and the tree entry it comes from. */
export interface FolderEntry extends TreeEntry {
  readonly rel: string;
}

/** A skill folder found in a commit: its path in the repository, its name, and everything below it. */
export interface TreeSkillFolder {
  readonly dir: string;
  readonly name: string;
  readonly entries: readonly FolderEntry[];
}

export interface TreeDiscovery {
  readonly folders: TreeSkillFolder[];
  /** What discovery did not look at, and why (too deep, links and submodules outside skill folders). */
  readonly warnings: SkillProblem[];
}

/** The files that make a folder a skill: a SKILL.md, or an executable skill's manifest. */
const MARKERS = ['SKILL.md', 'skill.json'];

interface Dir {
  readonly files: Map<string, TreeEntry>;
  readonly dirs: Set<string>;
}

/**
 * Finds the skill folders of a commit under `root` by discovery's rules (libs/skills): a folder holding a SKILL.md
 * (or an executable skill's skill.json) is a skill and is not searched further; `node_modules` and `.git` are skipped;
 * nothing deeper than discovery's depth is looked at. Unlike a root on disk, `root` itself may be the skill (a
 * repository of one skill): then its name is the folder's, or the repository's at its top. Links are files here,
 * never folders to walk into.
 */
export function discoverInTree(tree: readonly TreeEntry[], root: string, repoName: string): TreeDiscovery {
  const dirs = indexDirs(tree, root);
  if (!dirs.has(root)) {
    throw new AlfredError(ErrorCode.NotFound, `the repository has no folder "${root}"`, {
      path: root,
      reason: 'path_not_found',
    });
  }
  const folders: TreeSkillFolder[] = [];
  const warnings: SkillProblem[] = [];
  const warn = (file: string, message: string) =>
    void warnings.push({ severity: 'warning', field: 'discovery', message, file });
  const isSkill = (dir: Dir) =>
    MARKERS.some((m) => dir.files.get(m)?.type === 'blob' && dir.files.get(m)?.mode !== LINK_MODE);
  const walk = (path: string, depth: number): void => {
    const dir = dirs.get(path)!;
    if (isSkill(dir)) {
      folders.push({ dir: path, name: posix.basename(path) || repoName, entries: entriesUnder(tree, path) });
      return;
    }
    for (const entry of dir.files.values()) {
      if (entry.type === 'commit') warn(entry.path, 'a submodule: submodules are not fetched');
      else if (entry.mode === LINK_MODE)
        warn(entry.path, 'a symbolic link outside any skill folder: links are not followed');
    }
    for (const name of [...dir.dirs].sort()) {
      if (IGNORED_DIRS.has(name)) continue;
      const child = path ? `${path}/${name}` : name;
      if (depth + 1 <= DISCOVERY_MAX_DEPTH) walk(child, depth + 1);
      else warn(child, `deeper than ${DISCOVERY_MAX_DEPTH} levels below "${root || '/'}"; not searched for skills`);
    }
  };
  walk(root, 0);
  return { folders, warnings };
}

/** Every folder that holds something, keyed by its repository path ('' is the top). */
function indexDirs(tree: readonly TreeEntry[], root: string): Map<string, Dir> {
  const dirs = new Map<string, Dir>();
  const dirOf = (path: string) => {
    let dir = dirs.get(path);
    if (!dir) dirs.set(path, (dir = { files: new Map(), dirs: new Set() }));
    return dir;
  };
  for (const entry of tree) {
    if (root && !entry.path.startsWith(`${root}/`)) continue;
    const parts = entry.path.split('/');
    for (let i = 0; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (i === parts.length - 1) dirOf(parent).files.set(parts[i]!, entry);
      else dirOf(parent).dirs.add(parts[i]!);
    }
  }
  return dirs;
}

function entriesUnder(tree: readonly TreeEntry[], dir: string): FolderEntry[] {
  const prefix = dir ? `${dir}/` : '';
  return tree.filter((e) => e.path.startsWith(prefix)).map((e) => ({ ...e, rel: e.path.slice(prefix.length) }));
}
