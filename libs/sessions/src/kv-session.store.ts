import { z } from 'zod';
import {
  ErrorCode,
  SessionSummary,
  type Scope,
  type SessionAppendResult,
  type SessionList,
  type SessionMessage,
  type SessionTokens,
  type SessionView,
} from '#contracts';
import { AlfredError } from '#errors';
import { isKvConflict, type KvEntry, type KvStore } from '#kv';
import { agentPrefix, ownerKey, sessionKey } from './kv-session.keys.js';
import { KvSessionLeases } from './kv-session.leases.js';
import { MERGE_AT, SessionMessages } from './kv-session.messages.js';
import { checkSessionId, firstMessageText, newSession, page, summaryOf, versionConflict } from './session-record.js';
import type {
  CreateSessionOptions,
  FencedWrite,
  ListSessionsOptions,
  ReplaceMessagesOptions,
  SessionLease,
  SessionStore,
} from './session-store.js';

/** A session's record: its summary, the chunks that hold its messages (in order) and the newest fencing token. */
export const SessionRecord = SessionSummary.extend({ chunks: z.array(z.string()), fence: z.number().int().optional() });
export type SessionRecord = z.infer<typeof SessionRecord>;

const MAX_ATTEMPTS = 200;
const READ_ATTEMPTS = 5;

/**
 * Sessions on the key-value port (Redis distributed, files embedded). Every change is a compare-and-set on the
 * session's record, retried when another instance changed it first: concurrent appends from any instance never lose a
 * message, and a fenced write is checked against the record's fence in the same step as it lands. An append first
 * stores its messages as a chunk of their own and then names it in the record, so it costs what it adds.
 */
export class KvSessionStore implements SessionStore {
  private readonly leases: KvSessionLeases;
  private readonly messages: SessionMessages;
  /** This instance's writes of each session, in the order they were made (a lost race must not reorder them). */
  private readonly lanes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kv: KvStore,
    /** Where leases live: the same store distributed; the process's memory embedded (a lease ends with its process). */
    leases: KvStore = kv,
  ) {
    this.leases = new KvSessionLeases(kv, leases);
    this.messages = new SessionMessages(kv);
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
    const record: SessionRecord = { ...summaryOf(view), chunks: [] };
    try {
      await this.kv.put(sessionKey(scope, view.id), JSON.stringify(record), { expected: 0 });
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

  async append(
    scope: Scope,
    id: string,
    messages: readonly SessionMessage[],
    options: FencedWrite = {},
  ): Promise<SessionAppendResult> {
    const record = await this.withChunk(scope, id, messages, options, (r, chunk) => ({
      ...r,
      chunks: [...r.chunks, chunk],
      version: r.version + 1,
      message_count: r.message_count + messages.length,
      first_message: r.message_count === 0 ? firstMessageText(messages[0]) : r.first_message,
    }));
    if (record.chunks.length > MERGE_AT) await this.merge(scope, id).catch(() => undefined);
    return { id, version: record.version, message_count: record.message_count, appended: messages.length };
  }

  async replace(scope: Scope, id: string, options: ReplaceMessagesOptions): Promise<number> {
    let replaced: readonly string[] = [];
    const record = await this.withChunk(scope, id, options.messages, options, (r, chunk) => {
      if (r.version !== options.expectedVersion) throw versionConflict(id, options.expectedVersion, r.version);
      replaced = r.chunks;
      const version = r.version + 1;
      const tokens = options.tokens ? { ...options.tokens, at_version: version } : r.tokens;
      const first = firstMessageText(options.messages[0]);
      return { ...r, chunks: [chunk], version, message_count: options.messages.length, first_message: first, tokens };
    });
    await this.messages.drop(scope, id, replaced);
    return record.version;
  }

  async setActiveSkill(scope: Scope, id: string, skill: string | null, options: FencedWrite = {}): Promise<void> {
    await this.change(scope, id, options, (r) => ({
      ...r,
      active_skill: skill,
      loaded_skills:
        skill === null || r.loaded_skills.includes(skill) ? r.loaded_skills : [...r.loaded_skills, skill].sort(),
    }));
  }

  async setTokens(scope: Scope, id: string, tokens: SessionTokens, options: FencedWrite = {}): Promise<void> {
    await this.change(scope, id, options, (r) => ({ ...r, tokens }));
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    checkSessionId(id);
    const existed = await this.kv.delete(sessionKey(scope, id));
    await this.leases.forget(scope, id);
    await this.messages.dropAll(scope, id);
    // Only the owner's entry goes: a same-id session of another agent (impossible with minted UUIDs) keeps its own.
    const owner = await this.kv.get(ownerKey(scope.tenant, id));
    if (owner?.value === scope.agent)
      await this.kv.delete(ownerKey(scope.tenant, id), { expected: owner.revision }).catch(ignoreConflict);
    return existed;
  }

  async deleteAll(scope: Scope): Promise<number> {
    let deleted = 0;
    for (const key of await this.kv.keys(agentPrefix(scope)))
      if (await this.delete(scope, key.slice(agentPrefix(scope).length))) deleted++;
    return deleted;
  }

  async locate(tenant: string, id: string): Promise<string | undefined> {
    checkSessionId(id);
    const agent = (await this.kv.get(ownerKey(tenant, id)))?.value;
    // The owner entry is written before its session: one whose session never landed names no agent.
    if (agent === undefined || !(await this.kv.get(sessionKey({ tenant, agent }, id)))) return undefined;
    return agent;
  }

  /** Newest first; from the records alone (no message is read). */
  async list(scope: Scope, options: ListSessionsOptions = {}): Promise<SessionList> {
    const summaries = (await this.kv.list(agentPrefix(scope))).map((e) => summaryOfRecord(parseRecord(e)));
    const sessions = summaries.sort((a, b) => b.created_at.localeCompare(a.created_at));
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

  /** Stores `messages` as a chunk, then commits `change` naming it; the chunk goes again when the change is refused. */
  private async withChunk(
    scope: Scope,
    id: string,
    messages: readonly SessionMessage[],
    options: FencedWrite,
    change: (r: SessionRecord, chunk: string) => SessionRecord,
  ): Promise<SessionRecord> {
    checkSessionId(id);
    return this.serially(sessionKey(scope, id), async () => {
      const chunk = await this.messages.write(scope, id, messages);
      try {
        return await this.commit(scope, id, options, (r) => change(r, chunk));
      } catch (err) {
        await this.messages.drop(scope, id, [chunk]);
        throw err;
      }
    });
  }

  private change(
    scope: Scope,
    id: string,
    options: FencedWrite,
    change: (r: SessionRecord) => SessionRecord,
  ): Promise<SessionRecord> {
    checkSessionId(id);
    return this.serially(sessionKey(scope, id), () => this.commit(scope, id, options, change));
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

  /** A compare-and-set of the record: refused when fenced out, retried when another change landed first. */
  private async commit(
    scope: Scope,
    id: string,
    options: FencedWrite,
    change: (r: SessionRecord) => SessionRecord,
  ): Promise<SessionRecord> {
    const key = sessionKey(scope, id);
    for (let attempt = 1; ; attempt++) {
      const entry = await this.kv.get(key);
      if (!entry) throw AlfredError.notFound('session', id);
      const current = parseRecord(entry);
      const newest = current.fence ?? 0;
      if (options.fence && options.fence.token < newest)
        throw AlfredError.leaseLost('session', id, options.fence.token, newest);
      const next: SessionRecord = {
        ...change(current),
        updated_at: new Date().toISOString(),
        ...(current.fence === undefined ? {} : { fence: current.fence }),
      };
      try {
        await this.kv.put(key, JSON.stringify(next), { expected: entry.revision });
        return next;
      } catch (err) {
        if (!isKvConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
        // Many writers on one session: spread the retries so they do not collide again in lockstep.
        if (attempt > 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(20, attempt)));
      }
    }
  }

  /** Folds the session's chunks into one (not a change of the session: its version stays). */
  private async merge(scope: Scope, id: string): Promise<void> {
    const entry = await this.kv.get(sessionKey(scope, id));
    const record = entry && parseRecord(entry);
    if (!entry || !record || record.chunks.length <= MERGE_AT) return;
    const messages = await this.messages.read(scope, id, record.chunks);
    if (!messages) return;
    const chunk = await this.messages.write(scope, id, messages);
    try {
      await this.kv.put(sessionKey(scope, id), JSON.stringify({ ...record, chunks: [chunk] }), {
        expected: entry.revision,
      });
    } catch (err) {
      // The session changed meanwhile: the merge is left to a later append.
      await this.messages.drop(scope, id, [chunk]);
      throw err;
    }
    await this.messages.drop(scope, id, record.chunks);
  }

  /** The session with its messages; re-read when a compaction or merge replaced a chunk between the two reads. */
  private async read(scope: Scope, id: string): Promise<SessionView | undefined> {
    for (let attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
      const entry = await this.kv.get(sessionKey(scope, id));
      if (!entry) return undefined;
      const record = parseRecord(entry);
      const messages = await this.messages.read(scope, id, record.chunks);
      if (messages) return { ...summaryOfRecord(record), messages };
    }
    throw new AlfredError(ErrorCode.Internal, `session ${id} names message chunks that are not stored`, { id });
  }
}

function parseRecord(entry: KvEntry): SessionRecord {
  let json: unknown;
  try {
    json = JSON.parse(entry.value);
  } catch {
    json = undefined;
  }
  const parsed = SessionRecord.safeParse(json);
  if (!parsed.success)
    throw new AlfredError(ErrorCode.Internal, `session record ${entry.key} is corrupt`, { key: entry.key });
  return parsed.data;
}

function summaryOfRecord(record: SessionRecord): SessionSummary {
  const { chunks: _chunks, fence: _fence, ...summary } = record;
  return summary;
}

function ignoreConflict(err: unknown): void {
  if (!isKvConflict(err)) throw err;
}
