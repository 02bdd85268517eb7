import { ErrorCode, SessionView, type Scope, type SessionAppendResult, type SessionList, type SessionMessage, type SessionTokens } from '#contracts';
import { AlfredError } from '#errors';
import { isKvConflict, type KvEntry, type KvStore } from '#kv';
import { agentPrefix, ownerKey, sessionKey } from './kv-session.keys.js';
import { KvSessionLeases } from './kv-session.leases.js';
import { checkSessionId, firstMessageText, newSession, page, summaryOf, versionConflict } from './session-record.js';
import type { CreateSessionOptions, FencedWrite, ListSessionsOptions, ReplaceMessagesOptions, SessionLease, SessionStore } from './session-store.js';

/** A session as stored: its view and the newest fencing token handed out for it. */
type Stored = SessionView & { readonly fence?: number };

const MAX_ATTEMPTS = 200;

/**
 * Sessions on the key-value port (Redis distributed, files embedded): one record per session, every change a
 * compare-and-set on it, retried when another instance changed it first, so concurrent appends from any instance
 * never lose a message and a fenced write is checked against the record's fence in the same step as it lands.
 */
export class KvSessionStore implements SessionStore {
  private readonly leases: KvSessionLeases;
  /** This instance's writes of each session, in the order they were made (a lost race must not reorder them). */
  private readonly lanes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kv: KvStore,
    /** Where leases live: the same store distributed; the process's memory embedded (a lease ends with its process). */
    leases: KvStore = kv,
  ) {
    this.leases = new KvSessionLeases(kv, leases);
  }

  async create(scope: Scope, options: CreateSessionOptions = {}): Promise<SessionView> {
    const view = newSession(scope, options.metadata, options.id);
    checkSessionId(view.id);
    if (options.id !== undefined) {
      const existing = await this.read(scope, options.id);
      if (existing) return existing;
    }
    // The owner first: a session is never stored without the entry that names its agent.
    await this.kv.put(ownerKey(scope.tenant, view.id), scope.agent);
    try {
      await this.kv.put(sessionKey(scope, view.id), JSON.stringify(view), { expected: 0 });
    } catch (err) {
      // Created meanwhile under the same id (a retried keyed create): that session is the answer.
      if (isKvConflict(err) && options.id !== undefined) return this.get(scope, options.id);
      throw err;
    }
    return view;
  }

  async get(scope: Scope, id: string): Promise<SessionView> {
    checkSessionId(id);
    const view = await this.read(scope, id);
    if (!view) throw AlfredError.notFound('session', id);
    return view;
  }

  async append(scope: Scope, id: string, messages: readonly SessionMessage[], options: FencedWrite = {}): Promise<SessionAppendResult> {
    const view = await this.update(scope, id, options, (v) => ({ ...v, messages: [...v.messages, ...messages], version: v.version + 1 }));
    return { id, version: view.version, message_count: view.message_count, appended: messages.length };
  }

  async replace(scope: Scope, id: string, options: ReplaceMessagesOptions): Promise<number> {
    const view = await this.update(scope, id, options, (v) => {
      if (v.version !== options.expectedVersion) throw versionConflict(id, options.expectedVersion, v.version);
      const version = v.version + 1;
      const tokens = options.tokens ? { ...options.tokens, at_version: version } : v.tokens;
      return { ...v, messages: [...options.messages], version, tokens };
    });
    return view.version;
  }

  async setActiveSkill(scope: Scope, id: string, skill: string | null, options: FencedWrite = {}): Promise<void> {
    await this.update(scope, id, options, (v) => ({
      ...v,
      active_skill: skill,
      loaded_skills: skill === null || v.loaded_skills.includes(skill) ? v.loaded_skills : [...v.loaded_skills, skill].sort(),
    }));
  }

  async setTokens(scope: Scope, id: string, tokens: SessionTokens, options: FencedWrite = {}): Promise<void> {
    await this.update(scope, id, options, (v) => ({ ...v, tokens }));
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    checkSessionId(id);
    const existed = await this.kv.delete(sessionKey(scope, id));
    await this.leases.forget(scope, id);
    // Only the owner's entry goes: a same-id session of another agent (impossible with minted UUIDs) keeps its own.
    const owner = await this.kv.get(ownerKey(scope.tenant, id));
    if (owner?.value === scope.agent) await this.kv.delete(ownerKey(scope.tenant, id), { expected: owner.revision }).catch(ignoreConflict);
    return existed;
  }

  async deleteAll(scope: Scope): Promise<number> {
    let deleted = 0;
    for (const key of await this.kv.keys(agentPrefix(scope))) if (await this.delete(scope, key.slice(agentPrefix(scope).length))) deleted++;
    return deleted;
  }

  async locate(tenant: string, id: string): Promise<string | undefined> {
    checkSessionId(id);
    const agent = (await this.kv.get(ownerKey(tenant, id)))?.value;
    // The owner entry is written before its session: one whose session never landed names no agent.
    if (agent === undefined || !(await this.kv.get(sessionKey({ tenant, agent }, id)))) return undefined;
    return agent;
  }

  /** Newest first; the summaries come from the records of the agent's sessions. */
  async list(scope: Scope, options: ListSessionsOptions = {}): Promise<SessionList> {
    const views = (await this.kv.list(agentPrefix(scope))).map((e) => this.parse(e));
    const sessions = views.map(summaryOf).sort((a, b) => b.created_at.localeCompare(a.created_at));
    return { sessions: page(sessions, options.offset, options.limit), total: sessions.length };
  }

  acquireLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<SessionLease | undefined> {
    checkSessionId(id);
    return this.leases.acquire(scope, id, owner, ttlMs);
  }

  renewLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionId(id);
    return this.leases.renew(scope, id, owner, ttlMs);
  }

  releaseLease(scope: Scope, id: string, owner: string): Promise<boolean> {
    checkSessionId(id);
    return this.leases.release(scope, id, owner);
  }

  async close(): Promise<void> {
    await this.kv.close();
  }

  /** A compare-and-set of the session's record: refused when fenced out, retried when another change landed first. */
  private async update(scope: Scope, id: string, options: FencedWrite, change: (v: SessionView) => SessionView): Promise<SessionView> {
    checkSessionId(id);
    const key = sessionKey(scope, id);
    return this.serially(key, () => this.compareAndSet(key, id, options, change));
  }

  /** Runs `fn` after this instance's earlier writes of `key` settled (FIFO). */
  private async serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.lanes.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    this.lanes.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.lanes.get(key) === tail) this.lanes.delete(key);
    }
  }

  private async compareAndSet(key: string, id: string, options: FencedWrite, change: (v: SessionView) => SessionView): Promise<SessionView> {
    for (let attempt = 1; ; attempt++) {
      const entry = await this.kv.get(key);
      if (!entry) throw AlfredError.notFound('session', id);
      const current = JSON.parse(entry.value) as Stored;
      const newest = current.fence ?? 0;
      if (options.fence && options.fence.token < newest) throw AlfredError.leaseLost('session', id, options.fence.token, newest);
      const next = change(this.parse(entry));
      const view = { ...next, message_count: next.messages.length, first_message: firstMessageText(next.messages[0]), updated_at: new Date().toISOString() };
      try {
        await this.kv.put(key, JSON.stringify({ ...view, ...(current.fence === undefined ? {} : { fence: current.fence }) }), { expected: entry.revision });
        return view;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
        // Many writers on one session: spread the retries so they do not collide again in lockstep.
        if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, attempt)));
      }
    }
  }

  private async read(scope: Scope, id: string): Promise<SessionView | undefined> {
    const entry = await this.kv.get(sessionKey(scope, id));
    return entry && this.parse(entry);
  }

  private parse(entry: KvEntry): SessionView {
    let json: unknown;
    try {
      json = JSON.parse(entry.value);
    } catch {
      json = undefined;
    }
    const parsed = SessionView.safeParse(json);
    if (!parsed.success) throw new AlfredError(ErrorCode.Internal, `session record ${entry.key} is corrupt`, { key: entry.key });
    return { ...parsed.data, first_message: firstMessageText(parsed.data.messages[0]) };
  }
}

function ignoreConflict(err: unknown): void {
  if (!isKvConflict(err)) throw err;
}
