import { SecretGuard } from '#content-safety';
import { outcomeEvidence, skillOutcomePrior } from './outcomes/skill-outcome.prior.js';
import type { SkillOutcomeRepository } from './outcomes/skill-outcome.repository.js';
import type { SkillProvenanceRepository } from './records/skill-provenance.repository.js';
import { allows } from '#agent-tools';
import type {
  NamePatterns,
  ScopedWriter,
  WriterQuery,
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
  InstalledFrom,
} from '#contracts';
import { ErrorCode, hasWriterFilter, skillToolName } from '#contracts';
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
import { sourceKey } from './install/git-source.js';
import type { InstallRecordsRepository } from './install/install-records.repository.js';

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
  /** Who wrote each skill created at run time; without it nothing is recorded and writer filters match nothing. */
  readonly provenance?: SkillProvenanceRepository;
  /** Where each skill installed from git came from (`installed_from`); without it none shows one. */
  readonly installs?: InstallRecordsRepository;
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
  /** Per tenant and skill: the outcome write last started, and the batch waiting to be written after it. */
  private readonly outcomeLanes = new Map<string, OutcomeLane>();

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

  /** The tenants' own skills (created through the API or installed from git). */
  get tenantSkills(): TenantSkills {
    return this.tenants;
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
  async index(
    tenant: string,
    budget?: number,
    only?: NamePatterns,
    written?: WriterQuery,
    installedFrom?: string,
  ): Promise<SkillRegistryIndex> {
    const effective = budget ?? (this.options.indexBudget || undefined);
    const catalog = await this.catalogOf(tenant);
    const listed = catalog.index();
    // Runtime-created and installed skills live in the tenant's own catalog: only there is there provenance to show or
    // filter on.
    const own = catalog !== this.catalog && this.options.provenance;
    const installed = await this.installedOf(tenant, catalog);
    const decorated = own ? await own.decorate(tenant, 'skill', listed.skills, (s) => s.name) : listed.skills;
    const base = {
      ...listed,
      skills: withInstalled(decorated, installed),
      warnings: catalog.rootWarnings(),
      budget: effective ?? null,
    };
    // What skills achieved for this tenant orders the index and decides what a budget drops first.
    const outcomes = await this.outcomesOf(
      tenant,
      base.skills.map((s) => s.name),
    );
    const estimate = outcomes.size > 0 ? (name: string) => outcomes.get(name)?.estimate : undefined;
    const filtered = hasWriterFilter(written);
    if (!only && !estimate && !filtered && installedFrom === undefined) {
      return { ...base, rendered: catalog === this.catalog ? this.render(effective) : renderOf(catalog, effective) };
    }
    const writtenBy = filtered ? (own ? await own.matching(tenant, 'skill', written) : new Set<string>()) : undefined;
    const fromSource = installedFrom === undefined ? undefined : fromSourceOf(installed, installedFrom);
    const sets = [writtenBy, fromSource].filter((x): x is Set<string> => x !== undefined);
    const permitted = (name: string) => !only || allows({ skills: only }, 'skill', name);
    const keep =
      only || sets.length > 0 ? (name: string) => permitted(name) && sets.every((set) => set.has(name)) : undefined;
    return {
      ...base,
      skills: keep ? base.skills.filter((s) => keep(s.name)) : base.skills,
      rendered: renderOf(catalog, effective, keep, estimate),
    };
  }

  /** The tenant's skills installed from git (SKILL.md part), by name. */
  private async installedOf(tenant: string, catalog: SkillCatalog): Promise<Map<string, InstalledFrom>> {
    if (catalog === this.catalog || !this.options.installs) return new Map();
    const all = await this.options.installs.all(tenant);
    return new Map([...all].filter(([, r]) => r.kinds.includes('skill')));
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
    const catalog = await this.catalogOf(tenant);
    const found = catalog.getBody(name);
    const [body] =
      catalog !== this.catalog && this.options.provenance
        ? await this.options.provenance.decorate(tenant, 'skill', [found], (s) => s.name)
        : [found];
    const outcomes = (await this.outcomesOf(tenant, [found.name])).get(found.name);
    const [shown] = withInstalled([body!], await this.installedOf(tenant, catalog));
    return outcomes ? { ...shown!, outcomes } : shown!;
  }

  /** Records one outcome of a skill's use (an unknown skill is NOT_FOUND). */
  async feedback(tenant: string, name: string, body: SkillFeedbackBody): Promise<SkillFeedbackResult> {
    const skill = (await this.catalogOf(tenant)).getBody(name).name;
    const outcomes = await this.count(tenant, skill, body.success);
    return { name: skill, outcomes, timestamp: new Date().toISOString() };
  }

  /**
   * One run of an executable skill (the runner already found it): counted under its id — the same counters as the
   * SKILL.md skill of that name — and for every SKILL.md skill the tenant sees whose `allowed-tools` offer its tool.
   */
  async executed(
    tenant: string,
    id: string,
    success: boolean,
  ): Promise<{ counted: string[]; outcomes: SkillOutcomes }> {
    const tool = skillToolName(id);
    const offering = (await this.catalogOf(tenant))
      .list()
      .filter((s) => s.name !== id && s.allowed_tools?.includes(tool))
      .map((s) => s.name);
    // Each skill's writes have their own lane: counting them together costs one write-time, not one per skill.
    const [outcomes] = await Promise.all([id, ...offering].map((name) => this.count(tenant, name, success)));
    return { counted: [id, ...offering], outcomes };
  }

  /**
   * Adds one outcome. Writes are serialised per tenant and skill in this instance, and grouped: outcomes that
   * arrive while a write runs are written together by the next one, so a busy skill costs one write per
   * write-time (about 20 ms embedded), not one per outcome, and outcomes never queue up behind each other.
   */
  private async count(tenant: string, skill: string, success: boolean): Promise<SkillOutcomes> {
    if (!this.options.outcomes)
      throw new AlfredError(ErrorCode.ServiceUnavailable, 'skill outcomes are not recorded by this registry');
    const repo = this.options.outcomes;
    const key = `${tenant}\u0000${skill}`;
    let lane = this.outcomeLanes.get(key);
    if (lane === undefined) this.outcomeLanes.set(key, (lane = { last: Promise.resolve() }));
    const batch = lane.waiting ?? this.nextBatch(key, lane, (counts) => repo.add(tenant, skill, counts));
    if (success) batch.counts.success++;
    else batch.counts.failure++;
    const outcomes = await batch.written;
    this.rendered.clear();
    return outcomes;
  }

  /** A batch written once the lane's last write has ended; outcomes join it until its write starts. */
  private nextBatch(
    key: string,
    lane: OutcomeLane,
    write: (counts: OutcomeBatch['counts']) => Promise<SkillOutcomes>,
  ): OutcomeBatch {
    const counts = { success: 0, failure: 0 };
    const written = lane.last
      .catch(() => undefined)
      .then(() => {
        lane.waiting = undefined;
        return write(counts);
      });
    const batch = { counts, written };
    lane.waiting = batch;
    lane.last = written;
    void written
      .catch(() => undefined)
      .then(() => lane.last === written && this.outcomeLanes.get(key) === lane && this.outcomeLanes.delete(key));
    return batch;
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
    return {
      ...changes,
      skills: (own ?? this.catalog).list().length,
      indexed,
      duration_ms: Math.round(performance.now() - started),
    };
  }

  /** A skill created through the API belongs to its tenant; its name may not shadow a shared one. */
  /**
   * A SKILL.md written at run time is content like a memory: secrets are refused (or redacted) before it is written.
   */
  /** Who wrote it is recorded with it (see SkillProvenanceRepository) and returned as `provenance`. */
  async create(tenant: string, input: unknown, writer?: ScopedWriter): Promise<SkillBodyResponse> {
    const admitted = await (this.options.secrets ?? new SecretGuard()).admitAll(tenant, input);
    const provenance = this.options.provenance;
    if (!provenance || !writer) return this.tenants.create(tenant, admitted);
    const name = (admitted as { name?: unknown } | null)?.name;
    const created = await provenance.around(tenant, 'skill', typeof name === 'string' ? name : undefined, writer, () =>
      this.tenants.create(tenant, admitted),
    );
    return (await provenance.decorate(tenant, 'skill', [created], (s) => s.name))[0]!;
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
    // Provenance filters: only the tenant's runtime-created skills have a writer, so shared ones never match.
    const { q: _q, limit: _limit, min_score: _min, installed_from: installedFrom, ...written } = query;
    const provenance = catalog !== this.catalog ? this.options.provenance : undefined;
    const installed = await this.installedOf(tenant, catalog);
    const ownOnly = [
      hasWriterFilter(written)
        ? ((await provenance?.matching(tenant, 'skill', written)) ?? new Set<string>())
        : undefined,
      installedFrom === undefined ? undefined : fromSourceOf(installed, installedFrom),
    ].filter((x): x is Set<string> => x !== undefined);
    const writtenBy =
      ownOnly.length > 0 ? new Set([...ownOnly[0]!].filter((n) => ownOnly.every((set) => set.has(n)))) : undefined;
    // A skill removed since the last sync, or shadowed by the tenant's own, is not offered from the shared index.
    const shared = writtenBy
      ? []
      : hits.filter((h) => this.catalog.has(h.name) && catalog.getBody(h.name).location === h.location);
    const own = (await this.tenants.search(tenant, options)).filter((h) => !writtenBy || writtenBy.has(h.name));
    const outcomes = await this.outcomesOf(
      tenant,
      [...own, ...shared].map((h) => h.name),
    );
    const ranked = this.ranker.rank(
      [...own, ...shared].map(({ signals, score: _score, ...skill }) => ({
        item: skill,
        evidence: { ...signals, ...outcomeEvidence(outcomes.get(skill.name)) },
      })),
      { minScore: query.min_score, limit: query.limit, key: (s) => s.name },
    );
    const scored = ranked.hits.map(({ item, score }) => {
      const o = outcomes.get(item.name);
      return { ...item, score, ...(o ? { outcomes: o } : {}) };
    });
    const results = withInstalled(
      provenance ? await provenance.decorate(tenant, 'skill', scored, (s) => s.name) : scored,
      installed,
    );
    const gone = hits.length - shared.length;
    return {
      results,
      query: query.q,
      total: writtenBy
        ? Math.max(results.length, own.length - ranked.dropped)
        : Math.max(results.length, total - gone + own.length - ranked.dropped),
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
      const texts = batch.map((s) =>
        searchTextOf(s, this.catalog.has(s.name) ? this.catalog.getBody(s.name).body : ''),
      );
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

/** Skills with their `installed_from`, where the tenant installed one of that name from git. */
function withInstalled<T extends { name: string }>(skills: readonly T[], installed: Map<string, InstalledFrom>): T[] {
  if (installed.size === 0) return [...skills];
  return skills.map((s) => {
    const from = installed.get(s.name);
    return from ? { ...s, installed_from: from } : s;
  });
}

/** Names of the installed skills whose source is `source` (compared as sources are). */
function fromSourceOf(installed: Map<string, InstalledFrom>, source: string): Set<string> {
  const key = sourceKey(source);
  return new Set([...installed].filter(([, r]) => sourceKey(r.source) === key).map(([name]) => name));
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

/** Outcomes of one skill not yet written, and the write that will hold them. */
interface OutcomeBatch {
  readonly counts: { success: number; failure: number };
  readonly written: Promise<SkillOutcomes>;
}

interface OutcomeLane {
  last: Promise<unknown>;
  waiting?: OutcomeBatch;
}
