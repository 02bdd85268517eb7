import { mkdir, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { SkillBodyResponse } from '#contracts';
import type { SearchOptions } from '#vector-store';
import type { Embedder } from '#embeddings';
import type { SkillCatalog } from '#skills';
import { tenantSkillScope, type IndexedSkill, type SkillHit, type SkillSearchRepository } from './skill-search.repository.js';

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
      entry = { dir, stale: true, catalog: this.options.shared.derive([{ dir, source: 'project' }, ...this.options.shared.roots]) };
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

  /** The shared roots changed: every tenant's view (but `except`'s, which its caller reloads) is re-read on its next use. */
  markStale(except?: string): void {
    for (const [tenant, entry] of this.tenants) if (tenant !== except) entry.stale = true;
  }

  async create(tenant: string, input: unknown): Promise<SkillBodyResponse> {
    const catalog = (await this.catalogOf(tenant, true))!;
    const created = await catalog.createSkill(input, this.tenants.get(tenant)!.dir);
    await this.sync(tenant);
    return created;
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
    const stale = own.filter((s) => entry.indexed!.get(s.name)?.digest !== s.digest || entry.indexed!.get(s.name)?.location !== s.location);
    if (stale.length > 0) {
      const texts = stale.map((s) => this.options.searchText(s, catalog.getBody(s.name).body));
      const vectors = await this.options.embedder.embed(texts);
      await this.options.search.upsert(stale.map((skill, i) => ({ skill, text: texts[i]!, vector: vectors[i]! })), scope);
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
