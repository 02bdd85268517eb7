import { FileSessionStore } from './file-session.store.js';
import { RedisSessionStore } from './redis-session.store.js';
import type { SessionStore } from './session-store.js';

export interface SessionStoreConfig {
  /** Set in the distributed shape: sessions live in Redis, reachable by every instance. */
  readonly REDIS_URL?: string;
  readonly ALFRED_REDIS_PREFIX?: string;
  /** Embedded shape: sessions are files under the data dir. */
  readonly ALFRED_DATA_DIR: string;
}

/** The session store a service's config asks for: Redis when REDIS_URL is set, else files under the data dir. */
export function createSessionStore(config: SessionStoreConfig): SessionStore {
  return config.REDIS_URL
    ? new RedisSessionStore({ redis: config.REDIS_URL, keyPrefix: config.ALFRED_REDIS_PREFIX })
    : new FileSessionStore({ dataDir: config.ALFRED_DATA_DIR });
}
