import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import { SessionMessage, type Scope, type SessionAppendResult, type SessionList, type SessionTokens, type SessionView } from '#contracts';
import { AlfredError } from '#errors';
import { checkSessionId, firstMessageText, newSession, safeSegment, versionConflict } from './session-record.js';
import * as lua from './redis-session.scripts.js';
import type { CreateSessionOptions, FencedWrite, ListSessionsOptions, ReplaceMessagesOptions, SessionLease, SessionStore } from './session-store.js';

export interface RedisSessionStoreOptions {
  /** A connection URL (the store owns and closes its connection) or a client (the caller closes it). */
  readonly redis: string | Redis;
  /** Prefix of every key, e.g. a unique one per test. */
  readonly keyPrefix?: string;
}

interface Keys {
  readonly meta: string;
  readonly messages: string;
  readonly skills: string;
  readonly lease: string;
  readonly index: string;
  /** Hash of the tenant: session id → agent (a session implies its agent). */
  readonly owners: string;
}

/**
 * Sessions in Redis: a hash of metadata, a list of messages (RPUSH inside a Lua script, so appends from any
 * instance are atomic and ordered) and a set of loaded skills per session; a sorted set indexes an agent's sessions.
 */
export class RedisSessionStore implements SessionStore {
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;

  constructor(options: RedisSessionStoreOptions) {
    this.owned = typeof options.redis === 'string';
    this.redis = typeof options.redis === 'string' ? createRedis(options.redis, 'sessions') : options.redis;
    this.prefix = options.keyPrefix ?? 'alfred:';
  }

  async create(scope: Scope, options: CreateSessionOptions = {}): Promise<SessionView> {
    const view = newSession(scope, options.metadata, options.id);
    const k = this.keys(scope, view.id);
    if (options.id !== undefined && (await this.redis.exists(k.meta))) return this.get(scope, options.id);
    await this.redis
      .multi()
      .hset(k.meta, {
        id: view.id,
        agent: view.agent,
        version: 0,
        created_at: view.created_at,
        updated_at: view.updated_at,
        active_skill: 'null',
        metadata: JSON.stringify(view.metadata),
        tokens: 'null',
      })
      .zadd(k.index, Date.parse(view.created_at), view.id)
      .hset(k.owners, view.id, scope.agent)
      .exec();
    return view;
  }

  async get(scope: Scope, id: string): Promise<SessionView> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const res = await this.redis.multi().hgetall(k.meta).lrange(k.messages, 0, -1).smembers(k.skills).exec();
    const [meta, messages, skills] = (res ?? []).map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [Record<string, string>, string[], string[]];
    if (!meta || Object.keys(meta).length === 0) throw AlfredError.notFound('session', id);
    const parsed = messages.map((m) => JSON.parse(m) as SessionMessage);
    return { ...this.summary(meta, messages.length, skills, parsed[0]), messages: parsed };
  }

  async append(scope: Scope, id: string, messages: readonly SessionMessage[], options: FencedWrite = {}): Promise<SessionAppendResult> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const args = [new Date().toISOString(), fenceArg(options), ...messages.map((m) => JSON.stringify(m))];
    // The second value is the message count, or the newest fencing token when the write is refused (-3).
    const [version, second] = (await this.redis.eval(lua.APPEND, 2, k.meta, k.messages, ...args)) as number[];
    if (version === -1) throw AlfredError.notFound('session', id);
    if (version === -3) throw AlfredError.leaseLost('session', id, options.fence!.token, second!);
    return { id, version, message_count: second, appended: messages.length };
  }

  async replace(scope: Scope, id: string, options: ReplaceMessagesOptions): Promise<number> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const tokens = options.tokens ? JSON.stringify({ ...options.tokens, at_version: options.expectedVersion + 1 }) : '';
    const args = [options.expectedVersion, new Date().toISOString(), tokens, fenceArg(options), ...options.messages.map((m) => JSON.stringify(m))];
    const [version, current] = (await this.redis.eval(lua.REPLACE, 2, k.meta, k.messages, ...args)) as number[];
    if (version === -2) throw AlfredError.notFound('session', id);
    if (version === -3) throw AlfredError.leaseLost('session', id, options.fence!.token, current!);
    if (version === -1) throw versionConflict(id, options.expectedVersion, current);
    return version;
  }

  async setActiveSkill(scope: Scope, id: string, skill: string | null, options: FencedWrite = {}): Promise<void> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const args = [new Date().toISOString(), JSON.stringify(skill), skill ?? '', fenceArg(options)];
    this.settle(id, options, (await this.redis.eval(lua.SET_SKILL, 2, k.meta, k.skills, ...args)) as number[]);
  }

  async setTokens(scope: Scope, id: string, tokens: SessionTokens, options: FencedWrite = {}): Promise<void> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const args = ['tokens', JSON.stringify(tokens), new Date().toISOString(), fenceArg(options)];
    this.settle(id, options, (await this.redis.eval(lua.SET_FIELD, 1, k.meta, ...args)) as number[]);
  }

  /** Turns a field script's {status, newest token} into NOT_FOUND or a refused stale write. */
  private settle(id: string, options: FencedWrite, [status, newest]: number[]): void {
    if (status === 0) throw AlfredError.notFound('session', id);
    if (status === -3) throw AlfredError.leaseLost('session', id, options.fence!.token, newest!);
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const res = await this.redis.multi().del(k.meta, k.messages, k.skills, k.lease).zrem(k.index, id).exec();
    const existed = Number(res?.[0]?.[1] ?? 0) > 0;
    // Only the owner's entry goes: a same-id session of another agent (impossible with minted UUIDs) keeps its own.
    if (existed && (await this.redis.hget(k.owners, id)) === scope.agent) await this.redis.hdel(k.owners, id);
    return existed;
  }

  async deleteAll(scope: Scope): Promise<number> {
    let deleted = 0;
    for (const id of await this.redis.zrevrange(this.keys(scope, '-').index, 0, -1)) if (await this.delete(scope, id)) deleted++;
    await this.redis.del(this.keys(scope, '-').index);
    return deleted;
  }

  async locate(tenant: string, id: string): Promise<string | undefined> {
    checkSessionId(id);
    const owners = `${this.prefix}session-owners:${safeSegment(tenant)}`;
    const agent = await this.redis.hget(owners, id);
    if (agent !== null) return agent;
    // Sessions stored before the owners hash existed: find the meta key by pattern (glob characters escaped).
    const glob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');
    const pattern = `${glob(`${this.prefix}session:${safeSegment(tenant)}:`)}*${glob(`:{${id}}:meta`)}`;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      const meta = keys[0] ? await this.redis.hget(keys[0], 'agent') : null;
      if (meta) return meta;
      cursor = next;
    } while (cursor !== '0');
    return undefined;
  }

  /** Reads only the requested page: ids from the sorted index by rank (newest first), then those sessions' hashes. */
  async list(scope: Scope, options: ListSessionsOptions = {}): Promise<SessionList> {
    const index = this.keys(scope, '-').index;
    const offset = options.offset ?? 0;
    const limit = options.limit ?? 100;
    const [[, total], [, ids]] = (await this.redis.multi().zcard(index).zrevrange(index, offset, offset + limit - 1).exec()) as [
      [unknown, number],
      [unknown, string[]],
    ];
    if (ids.length === 0) return { sessions: [], total };
    const pipe = this.redis.pipeline();
    for (const id of ids) {
      const k = this.keys(scope, id);
      pipe.hgetall(k.meta).llen(k.messages).smembers(k.skills).lindex(k.messages, 0);
    }
    const res = (await pipe.exec()) ?? [];
    const sessions = ids.flatMap((_, i) => {
      const [meta, count, skills, first] = [0, 1, 2, 3].map((j) => res[i * 4 + j]?.[1]) as [Record<string, string>, number, string[], string | null];
      if (!meta || Object.keys(meta).length === 0) return [];
      return [this.summary(meta, count, skills, first ? (JSON.parse(first) as SessionMessage) : undefined)];
    });
    return { sessions, total };
  }

  async acquireLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<SessionLease | undefined> {
    checkSessionId(id);
    const k = this.keys(scope, id);
    const token = (await this.redis.eval(lua.LEASE_ACQUIRE, 2, k.lease, k.meta, owner, Math.ceil(ttlMs))) as number;
    if (token === -1) throw AlfredError.notFound('session', id);
    return token > 0 ? { owner, token } : undefined;
  }

  async renewLease(scope: Scope, id: string, owner: string, ttlMs: number): Promise<boolean> {
    checkSessionId(id);
    return (await this.redis.eval(lua.LEASE_RENEW, 1, this.keys(scope, id).lease, owner, Math.ceil(ttlMs))) === 1;
  }

  async releaseLease(scope: Scope, id: string, owner: string): Promise<boolean> {
    checkSessionId(id);
    return (await this.redis.eval(lua.LEASE_RELEASE, 1, this.keys(scope, id).lease, owner)) === 1;
  }

  async close(): Promise<void> {
    if (this.owned) await this.redis.quit();
  }

  private keys(scope: Scope, id: string): Keys {
    const owner = `${safeSegment(scope.tenant)}:${scope.agent}`;
    // The hash tag keeps one session's keys in one cluster slot, as its Lua scripts need.
    const base = `${this.prefix}session:${owner}:{${id}}`;
    return {
      meta: `${base}:meta`,
      messages: `${base}:messages`,
      skills: `${base}:skills`,
      lease: `${base}:lease`,
      index: `${this.prefix}sessions:${owner}`,
      owners: `${this.prefix}session-owners:${safeSegment(scope.tenant)}`,
    };
  }

  private summary(meta: Record<string, string>, count: number, skills: string[], first: SessionMessage | undefined) {
    return {
      id: meta.id,
      agent: meta.agent,
      version: Number(meta.version),
      message_count: count,
      active_skill: JSON.parse(meta.active_skill ?? 'null') as string | null,
      loaded_skills: [...skills].sort(),
      metadata: JSON.parse(meta.metadata ?? '{}') as Record<string, unknown>,
      tokens: JSON.parse(meta.tokens ?? 'null') as SessionTokens | null,
      first_message: firstMessageText(first),
      created_at: meta.created_at,
      updated_at: meta.updated_at,
    };
  }
}

/** The fence argument of a write script: the lease token, or '' for an unfenced write. */
function fenceArg(options: FencedWrite): string {
  return options.fence ? String(options.fence.token) : '';
}
