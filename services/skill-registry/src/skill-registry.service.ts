import { permits } from '#agent-tools';
import type {
  NamePatterns,
  SkillBodyResponse,
  SkillRegistryIndex,
  SkillReloadResult,
  SkillResourceContent,
  SkillResourceList,
  SkillSearchQuery,
  SkillSearchResponse,
  SkillSummary,
} from '#contracts';
import { join } from 'node:path';
import type { Embedder } from '#embeddings';
import type { SearchOptions } from '#vector-store';
import { candidatePool, Ranker, skillProfile } from '#ranking';
import type { Logger } from '#logging';
import type { SkillCatalog } from '#skills';
import type { IndexedSkill, SkillSearchRepository } from './skill-search.repository.js';
import { PublicPaths } from './public-paths.js';
import { TenantSkills } from './tenant-skills.js';

export interface SkillRegistryOptions {
  /** `<project>/.alfred/skills`: where created skills are written. */
  readonly projectSkillsDir: string;
  /** Size budget of the rendered index in characters; 0 or undefined means none. */
  readonly indexBudget?: number;
  readonly logger?: Logger;
  /** Where each tenant's API-created skills live (`<dir>/<tenant>/<name>/SKILL.md`). */
  readonly tenantSkillsDir?: string;
}

/** Texts per embedder call and documents per store write (LanceDB writes are costly per call). */
const EMBED_BATCH = 250;

/** What is embedded for a skill: its name (also as words), description and body. */
export function searchTextOf(skill: SkillSummary, body: string): string {
  return `${skill.name} (${skill.name.replace(/-/g, ' ')})\n${skill.description}\n\n${body}`;
}

/**
 * The registry's logic: the catalog (discovery, levels 1-3, create) plus a search index kept in step
 * with it. Index syncs are serialised and re-embed only skills whose digest or location changed.
 */
export class SkillRegistryService {
  private indexed = new Map<string, IndexedSkill>();
  private syncing: Promise<number> = Promise.resolve(0);
  /** Renderings by budget; valid until the catalog changes. */
  private readonly rendered = new Map<number | undefined, SkillRegistryIndex['rendered']>();
  private readonly tenants: TenantSkills;
  private readonly ranker: Ranker;

  constructor(
    private readonly catalog: SkillCatalog,
    private readonly search: SkillSearchRepository,
    private readonly embedder: Embedder,
    private readonly options: SkillRegistryOptions,
  ) {
    this.tenants = new TenantSkills({
      base: options.tenantSkillsDir ?? join(options.projectSkillsDir, '..', 'tenant-skills'),
      shared: catalog,
      search,
      embedder,
      searchText: searchTextOf,
    });
    this.ranker = new Ranker(skillProfile(embedder.kind));
  }

  /** How the tenant's replies name skill folders: `/skills/<source>/…` and `/skills/tenant/…`, never server paths. */
  pathsOf(tenant: string): PublicPaths {
    return PublicPaths.of(this.catalog.roots, this.tenants.dirOf(tenant));
  }

  /** The catalog a tenant sees: its own skills over the shared roots, or the shared catalog alone. */
  private async catalogOf(tenant: string): Promise<SkillCatalog> {
    return (await this.tenants.catalogOf(tenant)) ?? this.catalog;
  }

  /** Loads the catalog and brings the search index up to date; with `watch`, follows file changes. */
  async start(watch: boolean): Promise<void> {
    this.indexed = await this.search.indexed();
    await this.catalog.reload();
    const embedded = await this.sync();
    this.options.logger?.info({ skills: this.catalog.list().length, embedded, watch }, 'skill catalog loaded');
    if (!watch) return;
    this.catalog.on('change', (changes) => {
      this.rendered.clear();
      this.tenants.markStale();
      this.options.logger?.info(changes, 'skills changed on disk');
      this.sync().catch((err: unknown) => this.options.logger?.error({ err }, 'skill search index update failed'));
    });
    this.catalog.on('watch-error', (err) => this.options.logger?.warn({ err }, 'skill watcher error'));
    this.catalog.watch();
  }

  /**
   * The level-1 index a tenant sees (its own skills over the shared roots); with `only` (an agent's skill policy)
   * it lists and renders just the skills that permits.
   */
  async index(tenant: string, budget?: number, only?: NamePatterns): Promise<SkillRegistryIndex> {
    const effective = budget ?? (this.options.indexBudget || undefined);
    const catalog = await this.catalogOf(tenant);
    const base = { ...catalog.index(), warnings: catalog.rootWarnings(), budget: effective ?? null };
    if (!only) return { ...base, rendered: catalog === this.catalog ? this.render(effective) : renderOf(catalog, effective) };
    const keep = (name: string) => permits(only, name);
    return { ...base, skills: base.skills.filter((s) => keep(s.name)), rendered: renderOf(catalog, effective, keep) };
  }

  private render(budget: number | undefined): SkillRegistryIndex['rendered'] {
    let rendered = this.rendered.get(budget);
    if (!rendered) {
      rendered = renderOf(this.catalog, budget);
      if (this.rendered.size > 16) this.rendered.clear();
      this.rendered.set(budget, rendered);
    }
    return rendered;
  }

  async get(tenant: string, name: string): Promise<SkillBodyResponse> {
    return (await this.catalogOf(tenant)).getBody(name);
  }

  async resources(tenant: string, name: string): Promise<SkillResourceList> {
    return (await this.catalogOf(tenant)).listResources(name);
  }

  async resource(tenant: string, name: string, path: string): Promise<SkillResourceContent> {
    return (await this.catalogOf(tenant)).readResource(name, path);
  }

  /** Re-reads the shared roots and the tenant's own skills; reports the changes the tenant sees. */
  async reload(tenant: string): Promise<SkillReloadResult> {
    const started = performance.now();
    const own = await this.tenants.catalogOf(tenant);
    const shared = await this.catalog.reload();
    this.rendered.clear();
    this.tenants.markStale(tenant);
    const changes = own ? await own.reload() : shared;
    let indexed = await this.sync();
    if (own) indexed += await this.tenants.sync(tenant);
    return { ...changes, skills: (own ?? this.catalog).list().length, indexed, duration_ms: Math.round(performance.now() - started) };
  }

  /** A skill created through the API belongs to its tenant; its name may not shadow a shared one. */
  create(tenant: string, input: unknown): Promise<SkillBodyResponse> {
    return this.tenants.create(tenant, input);
  }

  /** The tenant's own skills and the shared ones, ranked together by the ranking module (#ranking's skill profile). */
  async searchSkills(tenant: string, query: SkillSearchQuery): Promise<SkillSearchResponse> {
    const started = performance.now();
    await this.syncing.catch(() => undefined);
    const vector = this.ranker.uses('dense') ? (await this.embedder.embed([query.q]))[0] : undefined;
    const options: SearchOptions = {
      ...(vector ? { vector } : {}),
      text: query.q,
      limit: candidatePool(query.limit),
      minScore: this.ranker.relevanceFloor(query.min_score),
      fuse: (signals) => this.ranker.relevance(signals),
    };
    const catalog = await this.catalogOf(tenant);
    const { hits, total } = await this.search.search(options);
    // A skill removed since the last sync, or shadowed by the tenant's own, is not offered from the shared index.
    const shared = hits.filter((h) => this.catalog.has(h.name) && catalog.getBody(h.name).location === h.location);
    const own = await this.tenants.search(tenant, options);
    const ranked = this.ranker.rank(
      [...own, ...shared].map(({ signals, score: _score, ...skill }) => ({ item: skill, evidence: signals })),
      { minScore: query.min_score, limit: query.limit, key: (s) => s.name },
    );
    const results = ranked.hits.map(({ item, score }) => ({ ...item, score }));
    const gone = hits.length - shared.length;
    return {
      results,
      query: query.q,
      total: Math.max(results.length, total - gone + own.length - ranked.dropped),
      search_time_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  }

  /** Brings the search index in line with the catalog; resolves to how many skills were embedded. */
  sync(): Promise<number> {
    this.syncing = this.syncing.catch(() => 0).then(() => this.syncNow());
    return this.syncing;
  }

  private async syncNow(): Promise<number> {
    const current = this.catalog.list();
    const names = new Set(current.map((s) => s.name));
    const stale = current.filter((s) => {
      const known = this.indexed.get(s.name);
      return !known || known.digest !== s.digest || known.location !== s.location;
    });
    const gone = [...this.indexed.keys()].filter((name) => !names.has(name));
    for (let i = 0; i < stale.length; i += EMBED_BATCH) {
      const batch = stale.slice(i, i + EMBED_BATCH);
      const texts = batch.map((s) => searchTextOf(s, this.catalog.has(s.name) ? this.catalog.getBody(s.name).body : ''));
      const vectors = await this.embedder.embed(texts);
      await this.search.upsert(batch.map((skill, j) => ({ skill, text: texts[j]!, vector: vectors[j]! })));
      for (const s of batch) this.indexed.set(s.name, { digest: s.digest, location: s.location });
    }
    await this.search.delete(gone);
    for (const name of gone) this.indexed.delete(name);
    return stale.length;
  }

  /** Stops watching and waits for an index update in flight. */
  async close(): Promise<void> {
    await this.catalog.close();
    await this.tenants.close();
    await this.syncing.catch(() => undefined);
  }
}

function renderOf(catalog: SkillCatalog, budget: number | undefined, keep?: (name: string) => boolean): SkillRegistryIndex['rendered'] {
  const options = budget === undefined ? {} : { budget };
  return { markdown: catalog.renderIndexMarkdown(options, keep), xml: catalog.renderIndexXml(options, keep) };
}
