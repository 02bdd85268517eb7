import type { AgentRecord, AgentStore } from '#agent-registry';
import { createRedis } from '#redis';

/**
 * Moves the agents an earlier version kept in Redis (one hash per tenant, `<prefix>agents:{<tenant>}`, field = name)
 * into the shared registry every gateway reads; each is deleted from Redis only once the registry holds it, so an
 * interrupted move is finished by the next start. An agent already in the registry keeps the registry's record.
 * Returns how many records were moved.
 */
export async function moveRedisAgents(url: string, prefix: string, registry: AgentStore): Promise<number> {
  const redis = createRedis(url, 'agents-migration');
  const head = `${prefix}agents:{`;
  let moved = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${head}*}`, 'COUNT', 100);
      cursor = next;
      for (const key of keys) {
        const tenant = decodeURIComponent(key.slice(head.length, -1));
        for (const [name, json] of Object.entries(await redis.hgetall(key))) {
          await registry.create(tenant, JSON.parse(json) as AgentRecord);
          await redis.hdel(key, name);
          moved++;
        }
      }
    } while (cursor !== '0');
    return moved;
  } finally {
    await redis.quit();
  }
}
