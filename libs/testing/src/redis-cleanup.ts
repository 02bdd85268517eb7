import { Redis } from 'ioredis';

/** Deletes the keys a test wrote under its own prefix, so runs leave nothing behind on the shared Redis. */
export async function deleteRedisKeysWithPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
