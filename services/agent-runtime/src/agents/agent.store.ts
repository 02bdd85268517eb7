import type { AgentPolicy, AgentView } from '#contracts';

/**
 * A stored named agent (the `default` flag is derived from the name, not stored; records written before policies
 * existed have none, which means the default policy). `deleting` marks an agent whose data is being removed:
 * it no longer exists for any request.
 */
export type AgentRecord = Omit<AgentView, 'default' | 'policy'> & { readonly policy?: AgentPolicy; readonly deleting?: boolean };

/**
 * Named agents of each tenant, in a store every agent-runtime instance reaches (Redis when REDIS_URL is set,
 * files under the data dir otherwise).
 */
export interface AgentStore {
  /** Stores the agent unless one of that name exists; returns the stored record and whether it was created. */
  create(tenant: string, record: AgentRecord): Promise<{ record: AgentRecord; created: boolean }>;
  get(tenant: string, name: string): Promise<AgentRecord | undefined>;
  list(tenant: string): Promise<AgentRecord[]>;
  /** Replaces an existing record; false when the agent does not exist. */
  update(tenant: string, record: AgentRecord): Promise<boolean>;
  delete(tenant: string, name: string): Promise<boolean>;
  close(): Promise<void>;
}
