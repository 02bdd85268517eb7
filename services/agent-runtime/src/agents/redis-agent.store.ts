import type { Redis } from 'ioredis';
import { createRedis } from '#redis';
import { safeSegment } from '#sessions';
import type { AgentRecord, AgentStore } from './agent.store.js';

const UPDATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

/** Agents in Redis: one hash per tenant, field = agent name, value = the record's JSON. */
export class RedisAgentStore implements AgentStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = 'alfred:',
  ) {
    this.redis = createRedis(url, 'agents');
  }

  async create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }> {
    const created = (await this.redis.hsetnx(this.key(tenant), record.name, JSON.stringify(record))) === 1;
    if (created) return { record, created };
    return { record: (await this.get(tenant, record.name)) ?? record, created: false };
  }

  async get(tenant: string, name: string): Promise<AgentRecord | undefined> {
    const json = await this.redis.hget(this.key(tenant), name);
    return json === null ? undefined : (JSON.parse(json) as AgentRecord);
  }

  async list(tenant: string): Promise<AgentRecord[]> {
    const all = await this.redis.hgetall(this.key(tenant));
    return Object.values(all).map((json) => JSON.parse(json) as AgentRecord);
  }

  async update(tenant: string, record: AgentRecord): Promise<boolean> {
    return (await this.redis.eval(UPDATE, 1, this.key(tenant), record.name, JSON.stringify(record))) === 1;
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return (await this.redis.hdel(this.key(tenant), name)) === 1;
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  private key(tenant: string): string {
    return `${this.prefix}agents:{${safeSegment(tenant)}}`;
  }
}
