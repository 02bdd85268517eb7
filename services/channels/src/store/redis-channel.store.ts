import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import { safeSegment } from '#sessions';
import type { ChannelStore, ChatState, UpdateRecord } from './channel.store.js';

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
const MAX_CAS_ATTEMPTS = 50;

/** Channel state in Redis, keyed `<prefix>channels:<bot>:…`: chats as JSON with optimistic (WATCH) updates. */
export class RedisChannelStore implements ChannelStore {
  private readonly redis: Redis;
  private readonly base: string;

  constructor(url: string, prefix: string, bot: string) {
    this.redis = createRedis(url, 'channels');
    this.base = `${prefix}channels:${safeSegment(bot)}:`;
  }

  async getChat(chat: string): Promise<ChatState | undefined> {
    const json = await this.redis.get(this.chatKey(chat));
    return json === null ? undefined : (JSON.parse(json) as ChatState);
  }

  async updateChat(chat: string, change: (current: ChatState | undefined) => ChatState): Promise<ChatState> {
    const key = this.chatKey(chat);
    // A dedicated connection: WATCH is per connection, and the shared one may be watching another key.
    const conn = this.redis.duplicate();
    try {
      for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
        await conn.watch(key);
        const json = await conn.get(key);
        const next = change(json === null ? undefined : (JSON.parse(json) as ChatState));
        const result = await conn.multi().set(key, JSON.stringify(next)).exec();
        if (result !== null) return next;
      }
      throw new Error(`chat ${chat} changed ${MAX_CAS_ATTEMPTS} times while being updated`);
    } finally {
      conn.disconnect();
    }
  }

  async getUpdate(updateId: number): Promise<UpdateRecord | undefined> {
    const json = await this.redis.get(this.updateKey(updateId));
    return json === null ? undefined : (JSON.parse(json) as UpdateRecord);
  }

  async putUpdate(updateId: number, record: UpdateRecord, retentionMs: number): Promise<void> {
    await this.redis.set(this.updateKey(updateId), JSON.stringify(record), 'PX', retentionMs);
  }

  async holdPoller(owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, `${this.base}poller`, owner, String(ttlMs))) === 1;
  }

  async releasePoller(owner: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, `${this.base}poller`, owner);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  private chatKey(chat: string): string {
    return `${this.base}chat:${safeSegment(chat)}`;
  }

  private updateKey(updateId: number): string {
    return `${this.base}update:${updateId}`;
  }
}
