import { readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, SessionView, type Scope, type SessionAppendResult, type SessionList, type SessionMessage, type SessionTokens } from '#contracts';
import { AlfredError } from '#errors';
import { readIfExists, withLock, writeFileAtomic } from '#files';
import { checkSessionId, firstMessageText, newSession, page, safeSegment, summaryOf, versionConflict } from './session-record.js';
import type { CreateSessionOptions, FencedWrite, ListSessionsOptions, ReplaceMessagesOptions, SessionLease, SessionStore } from './session-store.js';

export interface FileSessionStoreOptions {
  /** Sessions live under `<dataDir>/sessions/<tenant>/<agent>/<id>.json`. */
  readonly dataDir: string;
}

interface Lease extends SessionLease {
  readonly expiresAt: number;
}

// Leases are in-process state (the embedded mode is one process), shared by instances like the file locks. `fences`
// keeps the newest token handed out per session (it outlives the lease), which fenced writes are checked against
// under the session's file lock; acquiring takes the same lock, so a check and its write never straddle a takeover.
const leases = new Map<string, Lease>();
const fences = new Map<string, number>();

/** The embedded session store: one JSON file per session, rewritten atomically under a per-session lock. */
export class FileSessionStore implements SessionStore {
  private readonly root: string;

  constructor(options: FileSessionStoreOptions) {
    this.root = resolve(options.dataDir, 'sessions');
  }

  async create(scope: Scope, options: CreateSessionOptions = {}): Promise<SessionView> {
    const view = newSession(scope, options.metadata, options.id);
    if (options.id !== undefined) {
      const existing = await this.read(scope, options.id);
      if (existing) return existing;
    }
    await withLock(this.path(scope, view.id), () => writeFileAtomic(this.path(scope, view.id), JSON.stringify(view)));
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
    const path = this.path(scope, id);
    return withLock(path, async () => {
      leases.delete(path);
      fences.delete(path);
      const existed = (await readIfExists(path)) !== undefined;
      await rm(path, { force: true });
      return existed;
    });
  }

  async deleteAll(scope: Scope): Promise<number> {
    let deleted = 0;
    for (const id of await this.ids(scope)) if (await this.delete(scope, id)) deleted++;
    await rm(this.dir(scope), { recursive: true, force: true });
    return deleted;
  }

  async locate(tenant: string, id: string): Promise<string | undefined> {
    checkSessionId(id);
    const tenantDir = join(this.root, safeSegment(tenant));
    const agents = await readdir(tenantDir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
    for (const agent of agents.sort()) {
      const found = await stat(join(tenantDir, agent, `${id}.json`)).then(() => true, () => false);
      if (found) return agent;
    }
    return undefined;
  }

  async list(scope: Scope, options: ListSessionsOptions = {}): Promise<SessionList> {
    const ids = await this.ids(scope);
    const views = (await Promise.all(ids.map((id) => this.read(scope, id)))).filter((v): v is SessionView => v !== undefined);
    const sessions = views.map(summaryOf).sort((a, b) => b.created_at.localeCompare(a.created_at));
    return { sessions: page(sessions, options.offset, options.limit), total: sessions.length };
  }

  async acquireLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<SessionLease | undefined> {
    checkSessionId(id);
    const key = this.path(scope, id);
    return withLock(key, async () => {
      if (!(await stat(key).then(() => true, () => false))) throw AlfredError.notFound('session', id);
      const held = leases.get(key);
      const live = held !== undefined && held.expiresAt > Date.now();
      if (live && held.owner !== owner) return undefined;
      const token = live ? held.token : (fences.get(key) ?? 0) + 1;
      fences.set(key, token);
      leases.set(key, { owner, token, expiresAt: Date.now() + ttlMs });
      return { owner, token };
    });
  }

  async renewLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionId(id);
    const key = this.path(scope, id);
    const held = leases.get(key);
    if (!held || held.owner !== owner || held.expiresAt <= Date.now()) return false;
    leases.set(key, { ...held, expiresAt: Date.now() + ttlMs });
    return true;
  }

  async releaseLease(scope: Scope, id: string, owner: string): Promise<boolean> {
    checkSessionId(id);
    const key = this.path(scope, id);
    const held = leases.get(key);
    if (!held || held.owner !== owner || held.expiresAt <= Date.now()) return false;
    leases.delete(key);
    return true;
  }

  async close(): Promise<void> {}

  private async ids(scope: Scope): Promise<string[]> {
    const names = await readdir(this.dir(scope)).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
    return names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).map((n) => n.slice(0, -5));
  }

  private async update(scope: Scope, id: string, options: FencedWrite, change: (v: SessionView) => SessionView): Promise<SessionView> {
    checkSessionId(id);
    const path = this.path(scope, id);
    return withLock(path, async () => {
      const current = await this.read(scope, id);
      if (!current) throw AlfredError.notFound('session', id);
      const newest = fences.get(path) ?? 0;
      if (options.fence && options.fence.token < newest) throw AlfredError.leaseLost('session', id, options.fence.token, newest);
      const next = change(current);
      const view = { ...next, message_count: next.messages.length, first_message: firstMessageText(next.messages[0]), updated_at: new Date().toISOString() };
      await writeFileAtomic(path, JSON.stringify(view));
      return view;
    });
  }

  private async read(scope: Scope, id: string): Promise<SessionView | undefined> {
    const text = await readIfExists(this.path(scope, id));
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = SessionView.safeParse(json);
    if (!parsed.success) throw new AlfredError(ErrorCode.Internal, `session file ${id} is corrupt`, { id });
    return { ...parsed.data, first_message: firstMessageText(parsed.data.messages[0]) };
  }

  private dir(scope: Scope): string {
    return join(this.root, safeSegment(scope.tenant), scope.agent);
  }

  private path(scope: Scope, id: string): string {
    return join(this.dir(scope), `${id}.json`);
  }
}
