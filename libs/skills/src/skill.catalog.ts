import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { basename, dirname } from 'node:path';
import {
  ErrorCode,
  type SkillBodyResponse,
  type SkillChanges,
  type SkillIndexResponse,
  type SkillResourceContent,
  type SkillResourceList,
  type SkillSummary,
} from '#contracts';
import { AlfredError } from '#errors';
import { suggestNames } from './name-suggestions.js';
import { discoverSkills, type DiscoveryOptions, type DiscoveryResult, type SkillRoot } from './skill-discovery.js';
import { IndexFormat, renderIndex, type RenderedIndex, type RenderOptions } from './skill-index.renderer.js';
import { DEFAULT_RESOURCE_LIMITS, listResources, readResource, type ResourceLimits } from './skill-resources.js';
import type { LoadedSkill } from './skill.types.js';
import { writeNewSkill } from './skill.writer.js';

export interface SkillCatalogOptions {
  roots: SkillRoot[];
  discovery?: DiscoveryOptions;
  resources?: ResourceLimits;
  /** Quiet time after the last file event before re-discovering. */
  debounceMs?: number;
  /** What the XML index shows as a skill's location; the SKILL.md path by default. */
  locationOf?: (skill: SkillSummary) => string;
}

export interface SkillCatalogEvents {
  change: [SkillChanges];
  'watch-error': [Error];
}

const EMPTY: DiscoveryResult = { skills: [], shadowed: [], skipped: [], warnings: [] };

/** The registry's state: the discovered skills, kept fresh by reload() and watch(). */
export class SkillCatalog extends EventEmitter<SkillCatalogEvents> {
  private state: DiscoveryResult = EMPTY;
  private byName = new Map<string, LoadedSkill>();
  private pending: Promise<SkillChanges> = Promise.resolve({ added: [], removed: [], changed: [] });
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly ancestorWatchers = new Map<string, { dir: string; watcher: FSWatcher }>();
  private watching = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SkillCatalogOptions) {
    super();
  }

  get roots(): readonly SkillRoot[] {
    return this.options.roots;
  }

  /** A new catalog over `roots` with this one's limits and settings (a tenant's view over the shared roots). */
  derive(roots: SkillRoot[]): SkillCatalog {
    return new SkillCatalog({ ...this.options, roots });
  }

  /** Re-discovers every root and reports which names were added, removed or changed (by digest). Serialised. */
  reload(): Promise<SkillChanges> {
    this.pending = this.pending.catch(() => undefined).then(() => this.reloadNow());
    return this.pending;
  }

  private async reloadNow(): Promise<SkillChanges> {
    const next = await discoverSkills(this.options.roots, this.options.discovery);
    const nextByName = new Map(next.skills.map((s) => [s.name, s]));
    const changes: SkillChanges = { added: [], removed: [], changed: [] };
    for (const [name, skill] of nextByName) {
      const before = this.byName.get(name);
      if (!before) changes.added.push(name);
      else if (before.digest !== skill.digest || before.location !== skill.location) changes.changed.push(name);
    }
    for (const name of this.byName.keys()) if (!nextByName.has(name)) changes.removed.push(name);
    this.state = next;
    this.byName = nextByName;
    if (this.watching) this.armWatchers();
    return changes;
  }

  /** Every loaded skill, by name. */
  list(): SkillSummary[] {
    return this.state.skills.map(toSummary);
  }

  /** GET /skills: skills, shadowed ones, skipped ones with their reasons. */
  index(): SkillIndexResponse {
    return { skills: this.list(), shadowed: [...this.state.shadowed], skipped: [...this.state.skipped] };
  }

  /** Problems about the roots themselves (bounds reached, symlinks refused). */
  rootWarnings() {
    return [...this.state.warnings];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The level-1 index as markdown; `only` keeps the skills it accepts (an agent's policy). */
  renderIndexMarkdown(options?: RenderOptions, only: (name: string) => boolean = () => true): RenderedIndex {
    return renderIndex(
      this.indexEntries().filter((e) => only(e.name)),
      IndexFormat.Markdown,
      options,
    );
  }

  renderIndexXml(options?: RenderOptions, only: (name: string) => boolean = () => true): RenderedIndex {
    return renderIndex(
      this.indexEntries().filter((e) => only(e.name)),
      IndexFormat.Xml,
      options,
    );
  }

  private indexEntries() {
    const rankOf = new Map(this.options.roots.map((r, i) => [r.dir, i]));
    const locationOf = this.options.locationOf;
    return this.state.skills.map((s) => ({
      name: s.name,
      description: s.description,
      location: locationOf ? locationOf(toSummary(s)) : s.location,
      rank: rankOf.get(s.root) ?? this.options.roots.length,
    }));
  }

  /** Level 2: the body below the frontmatter and the skill's metadata. */
  getBody(name: string): SkillBodyResponse {
    const { kind: _kind, ...body } = this.require(name);
    return body;
  }

  /** Level 3: the files beside SKILL.md. */
  listResources(name: string): Promise<SkillResourceList> {
    return listResources(this.require(name), this.options.resources ?? DEFAULT_RESOURCE_LIMITS);
  }

  /** Level 3: one file of the skill folder, text as utf8 and anything else as base64. */
  readResource(name: string, relPath: string): Promise<SkillResourceContent> {
    return readResource(this.require(name), relPath, this.options.resources ?? DEFAULT_RESOURCE_LIMITS);
  }

  /**
   * Writes `<projectRoot>/<name>/SKILL.md` (strictly validated; CONFLICT when the name exists in any root) and reloads.
   */
  async createSkill(input: unknown, projectRoot: string): Promise<SkillBodyResponse> {
    await this.reload();
    const name = (input as { name?: unknown } | null)?.name;
    if (typeof name === 'string' && this.byName.has(name)) {
      const existing = this.byName.get(name)!;
      throw new AlfredError(ErrorCode.Conflict, `skill ${name} already exists at ${existing.location}`, {
        name,
        path: existing.location,
      });
    }
    const written = await writeNewSkill(input, projectRoot);
    await this.reload();
    if (!this.byName.has(written.name)) {
      throw new AlfredError(
        ErrorCode.Internal,
        `skill ${written.name} was written to ${written.path} but ${projectRoot} is not a catalog root`,
      );
    }
    return this.getBody(written.name);
  }

  private require(name: string): LoadedSkill {
    const skill = this.byName.get(name);
    if (skill) return skill;
    const suggestions = suggestNames(name, this.byName.keys());
    const hint =
      suggestions.length > 0
        ? `; did you mean ${suggestions.join(', ')}?`
        : '; see the available skills index for valid names';
    throw new AlfredError(ErrorCode.NotFound, `skill "${name}" not found${hint}`, { name, suggestions });
  }

  /**
   * Watches every existing root (recursively) and reloads after a quiet period; emits `change` when something changed.
   */
  watch(): void {
    this.watching = true;
    this.armWatchers();
  }

  /**
   * One non-recursive watcher per directory under each root, re-armed after every reload. Directories, not files:
   * Node's recursive fs.watch on Linux watches each file's inode, so once a SKILL.md is replaced by rename (editors,
   * `sed -i`) later in-place edits of it go unseen; a directory's watch reports changes of whatever its entries are.
   * A library watcher that also watches every file (chokidar 5) took 2.5x the inotify watches, 9x the time to start
   * and 12x the memory on a tree of 1,000 skills, and does not notice a root that appears later (watchAncestor).
   */
  private armWatchers(): void {
    const wanted = new Set<string>();
    for (const root of this.options.roots) {
      if (!existsSync(root.dir)) {
        this.watchAncestor(root.dir);
        continue;
      }
      this.ancestorWatchers.get(root.dir)?.watcher.close();
      this.ancestorWatchers.delete(root.dir);
      for (const dir of directoriesUnder(root.dir)) wanted.add(dir);
    }
    for (const [dir, watcher] of this.watchers) {
      if (wanted.has(dir)) continue;
      watcher.close();
      this.watchers.delete(dir);
    }
    for (const dir of wanted) {
      if (this.watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, () => this.schedule());
        watcher.on('error', (err) => this.dropWatcher(dir, err));
        this.watchers.set(dir, watcher);
      } catch (err) {
        // Gone between the listing and the watch: the reload its removal triggers re-arms.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.emit('watch-error', err as Error);
      }
    }
  }

  /**
   * A root that does not exist yet (a project without `.alfred/skills`) is noticed when it appears:
   * its nearest existing ancestor is watched, not recursively, for the one entry on the way down.
   */
  private watchAncestor(rootDir: string): void {
    let child = rootDir;
    let parent = dirname(rootDir);
    while (!existsSync(parent) && parent !== dirname(parent)) {
      child = parent;
      parent = dirname(parent);
    }
    const current = this.ancestorWatchers.get(rootDir);
    if (current?.dir === parent) return;
    current?.watcher.close();
    this.ancestorWatchers.delete(rootDir);
    const next = basename(child);
    try {
      const watcher = watch(parent, (_event, filename) => {
        if (filename !== null && filename.toString() !== next) return;
        if (this.watching) this.armWatchers();
        this.schedule();
      });
      watcher.on('error', () => {
        watcher.close();
        this.ancestorWatchers.delete(rootDir);
      });
      this.ancestorWatchers.set(rootDir, { dir: parent, watcher });
    } catch {
      // The ancestor vanished in between; the next reload tries again.
    }
  }

  private dropWatcher(dir: string, err: Error): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
    this.emit('watch-error', err);
    this.schedule();
  }

  private schedule(): void {
    if (!this.watching) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.reload()
        .then((changes) => {
          if (changes.added.length + changes.removed.length + changes.changed.length > 0) this.emit('change', changes);
        })
        .catch((err: Error) => this.emit('watch-error', err));
    }, this.options.debounceMs ?? 150);
  }

  /** Stops watching; the catalog keeps answering from its last state. */
  async close(): Promise<void> {
    this.watching = false;
    clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    for (const { watcher } of this.ancestorWatchers.values()) watcher.close();
    this.ancestorWatchers.clear();
    await this.pending.catch(() => undefined);
  }
}

// Bounds the watch: skill roots hold folders of skills, not whole trees.
const MAX_WATCHED_DIRS = 10_000;

/** The directory and every directory below it (symbolic links not followed), up to MAX_WATCHED_DIRS. */
function directoriesUnder(root: string): string[] {
  const out = [root];
  for (let i = 0; i < out.length && out.length < MAX_WATCHED_DIRS; i++) {
    let entries: Dirent[];
    try {
      entries = readdirSync(out[i]!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) if (e.isDirectory() && !e.isSymbolicLink()) out.push(join(out[i]!, e.name));
  }
  return out.slice(0, MAX_WATCHED_DIRS);
}

function toSummary(skill: LoadedSkill): SkillSummary {
  const { kind: _kind, body: _body, body_line: _line, ...summary } = skill;
  return summary;
}
