import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import { AgentFileKind, type AgentFileHistoryEntry, type Scope, type Writer } from '#contracts';
import { checkContent, defaultContent, entryFor, fileConflict, restoreReason, safeSegment, versionNotFound } from './agent-file-record.js';
import type { AgentFileContent, AgentFileStore, AgentFileVersion, AgentFileWriteOptions } from './agent-file-store.js';

export interface RedisAgentFileStoreOptions {
  /** A connection URL (the store owns and closes its connection) or a client (the caller closes it). */
  readonly redis: string | Redis;
  readonly keyPrefix?: string;
}

/** KEYS: head, contents, meta. ARGV: expected version or '', content, entry JSON, at. Returns {version} or {-1, current}. */
const WRITE = `
local cur = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= cur then return {-1, cur} end
local v = cur + 1
redis.call('HSET', KEYS[2], v, ARGV[2])
redis.call('HSET', KEYS[3], v, ARGV[3])
redis.call('HSET', KEYS[1], 'version', v, 'updated_at', ARGV[4])
return {v}
`;

/**
 * Agent files in Redis, reachable by every service: per file a head hash (current version), a hash of every
 * version's content and a hash of every version's history entry, all changed together by one Lua script.
 */
export class RedisAgentFileStore implements AgentFileStore {
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;

  constructor(options: RedisAgentFileStoreOptions) {
    this.owned = typeof options.redis === 'string';
    this.redis = typeof options.redis === 'string' ? createRedis(options.redis, 'agent-files') : options.redis;
    this.prefix = options.keyPrefix ?? 'alfred:';
  }

  async read(scope: Scope, file: AgentFileKind): Promise<AgentFileContent> {
    const k = this.keys(scope, file);
    const [version, updatedAt] = await this.redis.hmget(k.head, 'version', 'updated_at');
    if (!version) return { content: defaultContent(file), version: 0, updated_at: null };
    // A version's content never changes once written, so reading it after the head is consistent.
    const content = await this.redis.hget(k.contents, version);
    return { content: content ?? '', version: Number(version), updated_at: updatedAt };
  }

  async write(scope: Scope, file: AgentFileKind, content: string, options: AgentFileWriteOptions): Promise<number> {
    checkContent(content);
    const k = this.keys(scope, file);
    const entry = entryFor(content, options.reason, options.writer);
    const expected = options.expectedVersion === undefined ? '' : String(options.expectedVersion);
    const [version, current] = (await this.redis.eval(WRITE, 3, k.head, k.contents, k.meta, expected, content, JSON.stringify(entry), entry.at)) as number[];
    if (version === -1) throw fileConflict(file, options.expectedVersion ?? 0, current);
    return version;
  }

  async history(scope: Scope, file: AgentFileKind): Promise<AgentFileHistoryEntry[]> {
    const all = await this.redis.hgetall(this.keys(scope, file).meta);
    return Object.entries(all)
      .map(([version, json]) => ({ version: Number(version), ...(JSON.parse(json) as Omit<AgentFileHistoryEntry, 'version'>) }))
      .sort((a, b) => b.version - a.version);
  }

  async readVersion(scope: Scope, file: AgentFileKind, version: number): Promise<AgentFileVersion> {
    const k = this.keys(scope, file);
    const [content, meta] = await Promise.all([this.redis.hget(k.contents, String(version)), this.redis.hget(k.meta, String(version))]);
    if (content === null || meta === null) throw versionNotFound(file, version);
    return { version, content, ...(JSON.parse(meta) as Omit<AgentFileHistoryEntry, 'version'>) };
  }

  async restore(scope: Scope, file: AgentFileKind, version: number, options: { expectedVersion?: number; writer?: Writer } = {}): Promise<number> {
    const old = await this.readVersion(scope, file, version);
    return this.write(scope, file, old.content, { reason: restoreReason(version), expectedVersion: options.expectedVersion, writer: options.writer });
  }

  async deleteAll(scope: Scope): Promise<number> {
    let written = 0;
    for (const file of AgentFileKind.options) {
      const k = this.keys(scope, file);
      const [[, head]] = (await this.redis.multi().exists(k.head).del(k.head, k.contents, k.meta).exec()) as [[unknown, number]];
      written += head;
    }
    return written;
  }

  async close(): Promise<void> {
    if (this.owned) await this.redis.quit();
  }

  private keys(scope: Scope, file: AgentFileKind) {
    const base = `${this.prefix}agent-file:{${safeSegment(scope.tenant)}:${scope.agent}:${file}}`;
    return { head: `${base}:head`, contents: `${base}:contents`, meta: `${base}:meta` };
  }
}
