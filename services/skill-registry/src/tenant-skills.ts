import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { SkillBodyResponse } from '#contracts';
import type { SearchOptions } from '#vector-store';
import type { Embedder } from '#embeddings';
import { listSkillFiles, type SkillCatalog } from '#skills';
import {
  tenantSkillScope,
  type IndexedSkill,
  type SkillHit,
  type SkillSearchRepository,
} from './skill-search.repository.js';

/** A folder just placed: put the old one back, or let it go. */
export interface PlacedFolder {
  undo(): Promise<void>;
  done(): Promise<void>;
}

interface TenantEntry {
  readonly catalog: SkillCatalog;
  readonly dir: string;
  stale: boolean;
  indexed?: Map<string, IndexedSkill>;
}

/** A tenant's folder name (any tenant id, no path tricks). */
const segment = (tenant: string) => encodeURIComponent(tenant).replace(/\./g, '%2E');

/**
 * SKILL.md skills created through the API belong to their tenant: written under `<base>/<tenant>/`, listed, read and
 * searched by that tenant alone, on top of the shared, read-only roots (project, home, bundled). A tenant that
 * created nothing simply sees the shared catalog.
 */
export class TenantSkills {
  private readonly tenants = new Map<string, TenantEntry>();

  constructor(
    private readonly options: {
      readonly base: string;
      /** The shared catalog: its roots lie under every tenant's own, and its limits apply to tenants' views too. */
      readonly shared: SkillCatalog;
      readonly search: SkillSearchRepository;
      readonly embedder: Embedder;
      readonly searchText: (skill: ReturnType<SkillCatalog['list']>[number], body: string) => string;
    },
  ) {}

  /** The tenant's catalog (its own skills over the shared roots), or undefined when it has none of its own. */
  async catalogOf(tenant: string, create = false): Promise<SkillCatalog | undefined> {
    let entry = this.tenants.get(tenant);
    if (!entry) {
      const dir = this.dirOf(tenant);
      if (create) await mkdir(dir, { recursive: true });
      else if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return undefined;
      entry = {
        dir,
        stale: true,
        catalog: this.options.shared.derive([{ dir, source: 'project' }, ...this.options.shared.roots]),
      };
      this.tenants.set(tenant, entry);
    }
    if (entry.stale) {
      entry.stale = false;
      await entry.catalog.reload();
    }
    return entry.catalog;
  }

  /** The folder that holds the tenant's own skills (whether or not it exists yet). */
  dirOf(tenant: string): string {
    return join(this.options.base, segment(tenant));
  }

  /**
   * The shared roots changed: every tenant's view (but `except`'s, which its caller reloads) is re-read on its next
   * use.
   */
  markStale(except?: string): void {
    for (const [tenant, entry] of this.tenants) if (tenant !== except) entry.stale = true;
  }

  async create(tenant: string, input: unknown): Promise<SkillBodyResponse> {
    const catalog = (await this.catalogOf(tenant, true))!;
    const created = await catalog.createSkill(input, this.tenants.get(tenant)!.dir);
    await this.sync(tenant);
    return created;
  }

  /** The skill of that name the tenant sees (its own, else a shared one), if any. */
  async visible(tenant: string, name: string): Promise<{ location: string; own: boolean } | undefined> {
    const catalog = (await this.catalogOf(tenant)) ?? this.options.shared;
    if (!catalog.has(name)) return undefined;
    const { location } = catalog.getBody(name);
    return { location, own: location.startsWith(this.dirOf(tenant) + sep) };
  }

  /** The folder of the tenant's own skill `name` (whether or not it exists). */
  folderOf(tenant: string, name: string): string {
    return join(this.dirOf(tenant), name);
  }

  /** The files of the tenant's own skill with their SHA-256 (what an update compares), or an empty map. */
  async filesOf(tenant: string, name: string): Promise<Map<string, string>> {
    const dir = this.folderOf(tenant, name);
    const { files } = await listSkillFiles(dir, { maxFiles: 10_000, maxDepth: 16 });
    const hashed = await Promise.all(
      files.map(
        async (f) =>
          [
            f.path,
            createHash('sha256')
              .update(await readFile(f.abs))
              .digest('hex'),
          ] as const,
      ),
    );
    return new Map(hashed);
  }

  /**
   * Writes a skill folder of the tenant's own in one step: staged beside the tenant folders, then renamed into place
   * (a folder it replaces is moved aside first). `undo` puts the old folder back, `done` drops it; the catalog and
   * search index see the change at the next `refresh`.
   */
  async place(tenant: string, name: string, files: ReadonlyMap<string, Buffer>): Promise<PlacedFolder> {
    const target = this.folderOf(tenant, name);
    const staging = join(this.options.base, `.staging-${randomUUID()}`);
    const trash = join(this.options.base, `.trash-${randomUUID()}`);
    try {
      for (const [rel, bytes] of files) {
        await mkdir(dirname(join(staging, rel)), { recursive: true });
        await writeFile(join(staging, rel), bytes);
      }
      await mkdir(this.dirOf(tenant), { recursive: true });
      const replaced = await rename(target, trash).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return false;
          throw err;
        },
      );
      await rename(staging, target).catch(async (err: unknown) => {
        if (replaced) await rename(trash, target);
        throw err;
      });
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

  /** Removes the tenant's own skill folder (moved aside, then deleted). */
  async removeOwn(tenant: string, name: string): Promise<void> {
    const trash = join(this.options.base, `.trash-${randomUUID()}`);
    await rename(this.folderOf(tenant, name), trash);
    await rm(trash, { recursive: true, force: true });
  }

  /** Re-reads the tenant's own skills and brings its search index up to date. */
  async refresh(tenant: string): Promise<void> {
    const entry = this.tenants.get(tenant);
    if (entry) entry.stale = true;
    await this.catalogOf(tenant, true);
    await this.sync(tenant);
  }

  /** Indexes the tenant's own skills for its searches (only what changed); resolves to how many were embedded. */
  async sync(tenant: string): Promise<number> {
    const catalog = await this.catalogOf(tenant);
    const entry = this.tenants.get(tenant);
    if (!catalog || !entry) return 0;
    const scope = tenantSkillScope(tenant);
    entry.indexed ??= await this.options.search.indexed(scope);
    const own = catalog.list().filter((s) => s.location.startsWith(entry.dir + sep));
    const names = new Set(own.map((s) => s.name));
    const stale = own.filter(
      (s) => entry.indexed!.get(s.name)?.digest !== s.digest || entry.indexed!.get(s.name)?.location !== s.location,
    );
    if (stale.length > 0) {
      const texts = stale.map((s) => this.options.searchText(s, catalog.getBody(s.name).body));
      const vectors = await this.options.embedder.embed(texts);
      await this.options.search.upsert(
        stale.map((skill, i) => ({ skill, text: texts[i]!, vector: vectors[i]! })),
        scope,
      );
      for (const s of stale) entry.indexed.set(s.name, { digest: s.digest, location: s.location });
    }
    const gone = [...entry.indexed.keys()].filter((name) => !names.has(name));
    await this.options.search.delete(gone, scope);
    for (const name of gone) entry.indexed.delete(name);
    return stale.length;
  }

  /** The tenant's own skills matching `options` (the same search the shared index gets), current ones only. */
  async search(tenant: string, options: SearchOptions): Promise<SkillHit[]> {
    const catalog = await this.catalogOf(tenant);
    if (!catalog) return [];
    const { hits } = await this.options.search.search(options, tenantSkillScope(tenant));
    return hits.filter((h) => catalog.has(h.name));
  }

  async close(): Promise<void> {
    await Promise.all([...this.tenants.values()].map((e) => e.catalog.close()));
  }
}
