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
import type { Embedder } from '#embeddings';
import { candidatePool, Ranker, skillProfile } from '#ranking';
import type { Logger } from '#logging';
import type { SkillCatalog } from '#skills';
import type { IndexedSkill, SkillSearchRepository } from './skill-search.repository.js';

export interface SkillRegistryOptions {
  /** `<project>/.alfred/skills`: where created skills are written. */
  readonly projectSkillsDir: string;
  /** Size budget of the rendered index in characters; 0 or undefined means none. */
  readonly indexBudget?: number;
  readonly logger?: Logger;
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
  private readonly ranker: Ranker;

  constructor(
    private readonly catalog: SkillCatalog,
    private readonly search: SkillSearchRepository,
    private readonly embedder: Embedder,
    private readonly options: SkillRegistryOptions,
  ) {
    this.ranker = new Ranker(skillProfile(embedder.kind));
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
      this.options.logger?.info(changes, 'skills changed on disk');
      this.sync().catch((err: unknown) => this.options.logger?.error({ err }, 'skill search index update failed'));
    });
    this.catalog.on('watch-error', (err) => this.options.logger?.warn({ err }, 'skill watcher error'));
    this.catalog.watch();
  }

  /** The level-1 index; with `only` (an agent's skill policy) it lists and renders just the skills that permits. */
  index(budget?: number, only?: NamePatterns): SkillRegistryIndex {
    const effective = budget ?? (this.options.indexBudget || undefined);
    const base = { ...this.catalog.index(), warnings: this.catalog.rootWarnings(), budget: effective ?? null };
    if (!only) return { ...base, rendered: this.render(effective) };
    const keep = (name: string) => permits(only, name);
    const options = effective === undefined ? {} : { budget: effective };
    const rendered = { markdown: this.catalog.renderIndexMarkdown(options, keep), xml: this.catalog.renderIndexXml(options, keep) };
    return { ...base, skills: base.skills.filter((s) => keep(s.name)), rendered };
  }

  private render(budget: number | undefined): SkillRegistryIndex['rendered'] {
    let rendered = this.rendered.get(budget);
    if (!rendered) {
      const options = budget === undefined ? {} : { budget };
      rendered = { markdown: this.catalog.renderIndexMarkdown(options), xml: this.catalog.renderIndexXml(options) };
      if (this.rendered.size > 16) this.rendered.clear();
      this.rendered.set(budget, rendered);
    }
    return rendered;
  }

  get(name: string): SkillBodyResponse {
    return this.catalog.getBody(name);
  }

  resources(name: string): Promise<SkillResourceList> {
    return this.catalog.listResources(name);
  }

  resource(name: string, path: string): Promise<SkillResourceContent> {
    return this.catalog.readResource(name, path);
  }

  async reload(): Promise<SkillReloadResult> {
    const started = performance.now();
    const changes = await this.catalog.reload();
    this.rendered.clear();
    const indexed = await this.sync();
    return { ...changes, skills: this.catalog.list().length, indexed, duration_ms: Math.round(performance.now() - started) };
  }

  async create(input: unknown): Promise<SkillBodyResponse> {
    const created = await this.catalog.createSkill(input, this.options.projectSkillsDir).finally(() => this.rendered.clear());
    await this.sync();
    return created;
  }

  /** Ranked by the ranking module (#ranking's skill profile), like every other search. */
  async searchSkills(query: SkillSearchQuery): Promise<SkillSearchResponse> {
    const started = performance.now();
    await this.syncing.catch(() => undefined);
    const vector = this.ranker.uses('dense') ? (await this.embedder.embed([query.q]))[0] : undefined;
    const { hits, total } = await this.search.search({
      ...(vector ? { vector } : {}),
      text: query.q,
      limit: candidatePool(query.limit),
      minScore: this.ranker.relevanceFloor(query.min_score),
      fuse: (signals) => this.ranker.relevance(signals),
    });
    // A skill removed since the last sync is not offered.
    const current = hits.filter((h) => this.catalog.has(h.name));
    const ranked = this.ranker.rank(
      current.map(({ signals, score: _score, ...skill }) => ({ item: skill, evidence: signals })),
      { minScore: query.min_score, limit: query.limit, key: (s) => s.name },
    );
    const results = ranked.hits.map(({ item, score }) => ({ ...item, score }));
    const gone = hits.length - current.length;
    return { results, query: query.q, total: Math.max(results.length, total - gone - ranked.dropped), search_time_ms: Math.round((performance.now() - started) * 100) / 100 };
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
    await this.syncing.catch(() => undefined);
  }
}
