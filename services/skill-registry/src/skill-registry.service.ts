import { SecretGuard } from '#content-safety';
import { outcomeEvidence, skillOutcomePrior } from './outcomes/skill-outcome.prior.js';
import type { SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';
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
  SkillFeedbackBody,
  SkillFeedbackResult,
  SkillOutcomes,
  SkillSummary,
} from '#contracts';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';
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
  /** Checks a created skill's every text for credentials (default: refuse them all). */
  readonly secrets?: SecretGuard;
  /** What skills achieved, per tenant; without it skills rank by relevance alone. */
  readonly outcomes?: SkillOutcomeRepository;
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
  private readonly outcomeWrites = new Map<string, Promise<SkillOutcomes>>();

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
    const profile = skillProfile(embedder.kind);
    this.ranker = new Ranker({ ...profile, adjustments: [...profile.adjustments, skillOutcomePrior] });
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
    // What skills achieved for this tenant orders the index and decides what a budget drops first.
    const outcomes = await this.outcomesOf(tenant, base.skills.map((s) => s.name));
    const estimate = outcomes.size > 0 ? (name: string) => outcomes.get(name)?.estimate : undefined;
    if (!only && !estimate) return { ...base, rendered: catalog === this.catalog ? this.render(effective) : renderOf(catalog, effective) };
    const keep = only ? (name: string) => permits(only, name) : undefined;
    return { ...base, skills: keep ? base.skills.filter((s) => keep(s.name)) : base.skills, rendered: renderOf(catalog, effective, keep, estimate) };
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
    const body = (await this.catalogOf(tenant)).getBody(name);
    const outcomes = (await this.outcomesOf(tenant, [body.name])).get(body.name);
    return outcomes ? { ...body, outcomes } : body;
  }

  /** Records one outcome of a skill's use; serialised per tenant and skill in this instance. */
  async feedback(tenant: string, name: string, body: SkillFeedbackBody): Promise<SkillFeedbackResult> {
    const skill = (await this.catalogOf(tenant)).getBody(name).name; // an unknown skill is NOT_FOUND
    if (!this.options.outcomes) throw new AlfredError(ErrorCode.ServiceUnavailable, 'skill outcomes are not recorded by this registry');
    const repo = this.options.outcomes;
    const key = `${tenant}\u0000${skill}`;
    const run = (this.outcomeWrites.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => repo.add(tenant, skill, body.success, new Date().toISOString()));
    this.outcomeWrites.set(key, run);
    const outcomes = await run.finally(() => this.outcomeWrites.get(key) === run && this.outcomeWrites.delete(key));
    this.rendered.clear();
    return { name: skill, outcomes, timestamp: new Date().toISOString() };
  }

  private async outcomesOf(tenant: string, names: readonly string[]): Promise<Map<string, SkillOutcomes>> {
    return this.options.outcomes ? this.options.outcomes.getMany(tenant, names) : new Map();
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
  /** A SKILL.md written at run time is content like a memory: secrets are refused (or redacted) before it is written. */
  async create(tenant: string, input: unknown): Promise<SkillBodyResponse> {
    return this.tenants.create(tenant, await (this.options.secrets ?? new SecretGuard()).admitAll(tenant, input));
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
    const outcomes = await this.outcomesOf(tenant, [...own, ...shared].map((h) => h.name));
    const ranked = this.ranker.rank(
      [...own, ...shared].map(({ signals, score: _score, ...skill }) => ({ item: skill, evidence: { ...signals, ...outcomeEvidence(outcomes.get(skill.name)) } })),
      { minScore: query.min_score, limit: query.limit, key: (s) => s.name },
    );
    const results = ranked.hits.map(({ item, score }) => {
      const o = outcomes.get(item.name);
      return { ...item, score, ...(o ? { outcomes: o } : {}) };
    });
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

function renderOf(
  catalog: SkillCatalog,
  budget: number | undefined,
  keep?: (name: string) => boolean,
  estimate?: (name: string) => number | undefined,
): SkillRegistryIndex['rendered'] {
  const options = { ...(budget === undefined ? {} : { budget }), ...(estimate ? { estimate } : {}) };
  return { markdown: catalog.renderIndexMarkdown(options, keep), xml: catalog.renderIndexXml(options, keep) };
}
