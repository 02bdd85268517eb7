import type { AgentFileStore } from './agent-file-store.js';
import { FileAgentFileStore } from './file-agent-file.store.js';
import { RedisAgentFileStore } from './redis-agent-file.store.js';

export interface AgentFileStoreConfig {
  /** Set in the distributed shape: agent files live in Redis, reachable by every instance. */
  readonly REDIS_URL?: string;
  readonly ALFRED_REDIS_PREFIX?: string;
  /** Embedded shape: files under the data dir. */
  readonly ALFRED_DATA_DIR: string;
}

/** The agent-file store a service's config asks for: Redis when REDIS_URL is set, else files under the data dir. */
export function createAgentFileStore(config: AgentFileStoreConfig): AgentFileStore {
  return config.REDIS_URL
    ? new RedisAgentFileStore({ redis: config.REDIS_URL, keyPrefix: config.ALFRED_REDIS_PREFIX })
    : new FileAgentFileStore({ dataDir: config.ALFRED_DATA_DIR });
}
