import { ErrorCode, writerConditions, type Provenance, type ScopedWriter, type WriterQuery } from '#contracts';
import { AlfredError } from '#errors';
import { keyToken, putIfAbsent, type KvStore } from '#kv';

/** The two kinds of runtime-created skill: a SKILL.md skill (by name) and an executable skill (by id). */
export type SkillKind = 'skill' | 'executable';

/** The key-value bucket of skill provenance (before the bus's prefix distributed; `kv/<bucket>` of the data dir). */
export const SKILL_PROVENANCE_BUCKET = 'ALFRED_SKILL_PROVENANCE';

/** What is kept of a writer: the provenance a read shows, less the tenant (the key's). */
type Stored = Omit<Provenance, 'tenant'>;

/** Most records a filtered list looks at. */
const FILTER_CAP = 5_000;

const kindPrefix = (tenant: string, kind: SkillKind) => `${keyToken(tenant)}.${kind}.`;
const keyOf = (tenant: string, kind: SkillKind, name: string) => `${kindPrefix(tenant, kind)}${keyToken(name)}`;

/**
 * Who wrote each skill created or changed at run time (through the API or an agent's skill tools): the tenant, the
 * writing agent, its session and turn or the API key's name, the tool (`via`) and the client's `source` — the same
 * Writer the gateway derives for memories. Shown on reads as `provenance` and used by the skills lists' filters.
 * The provenance describes the current version: a change records its writer. Kept in a key-value bucket (NATS KV
 * distributed, files embedded), one key per tenant, kind and name.
 */
export class SkillProvenanceRepository {
  constructor(
    private readonly kv: KvStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Records the writer, then runs the write; a failed write puts the previous record back, and a record that cannot be
   * stored fails the request before anything is written.
   */
  async around<T>(
    tenant: string,
    kind: SkillKind,
    name: string | undefined,
    writer: ScopedWriter | undefined,
    write: () => Promise<T>,
  ): Promise<T> {
    if (!writer || !name) return write();
    const key = keyOf(tenant, kind, name);
    let before: string | undefined;
    try {
      before = (await this.kv.get(key))?.value;
      await this.kv.put(key, JSON.stringify(this.stored(writer)));
    } catch (err) {
      throw new AlfredError(
        ErrorCode.ServiceUnavailable,
        'who wrote the skill could not be recorded; nothing was changed',
        undefined,
        { cause: err },
      );
    }
    try {
      return await write();
    } catch (err) {
      await (before === undefined ? this.kv.delete(key) : this.kv.put(key, before)).catch(() => undefined);
      throw err;
    }
  }

  /** The items with their `provenance` where one was recorded. */
  async decorate<T>(tenant: string, kind: SkillKind, items: readonly T[], nameOf: (item: T) => string): Promise<T[]> {
    if (items.length === 0) return [];
    const names = [...new Set(items.map(nameOf))];
    const entries = await Promise.all(
      names.map(async (name) => [name, await this.kv.get(keyOf(tenant, kind, name))] as const),
    );
    const found = new Map(
      entries.flatMap(([name, e]) => (e ? [[name, { tenant, ...(JSON.parse(e.value) as Stored) }] as const] : [])),
    );
    return items.map((i) => {
      const provenance = found.get(nameOf(i));
      return provenance ? { ...i, provenance } : i;
    });
  }

  /** Names of the tenant's skills of `kind` whose writer matches every given filter. */
  async matching(tenant: string, kind: SkillKind, q: WriterQuery | undefined): Promise<Set<string>> {
    const conditions = writerConditions(q);
    const entries = await this.kv.list(kindPrefix(tenant, kind));
    const names = entries.flatMap((e) => {
      const stored = JSON.parse(e.value) as Record<string, unknown>;
      if (!conditions.every((c) => stored[c.field] === c.value)) return [];
      return [
        {
          name: Buffer.from(e.key.slice(kindPrefix(tenant, kind).length), 'base64url').toString('utf8'),
          at: String(stored.written_at),
        },
      ];
    });
    return new Set(
      names
        .sort((a, b) => b.at.localeCompare(a.at))
        .slice(0, FILTER_CAP)
        .map((n) => n.name),
    );
  }

  async forget(tenant: string, kind: SkillKind, name: string): Promise<void> {
    await this.kv.delete(keyOf(tenant, kind, name));
  }

  /** Stores a record an earlier version kept elsewhere, unless one was recorded since (the migration's write). */
  async adopt(tenant: string, kind: SkillKind, name: string, stored: Stored): Promise<void> {
    await putIfAbsent(this.kv, keyOf(tenant, kind, name), JSON.stringify(stored));
  }

  private stored(w: ScopedWriter): Stored {
    const opt = (k: 'session' | 'turn' | 'key' | 'via' | 'source') => (w[k] ? { [k]: w[k] } : {});
    return {
      agent: w.agent,
      ...opt('session'),
      ...opt('turn'),
      ...opt('key'),
      ...opt('via'),
      ...opt('source'),
      written_at: this.now().toISOString(),
    };
  }
}
