import { AgentPolicy, DEFAULT_AGENT_NAME, ErrorCode, type AgentView } from '#contracts';
import { AlfredError } from '#errors';

/**
 * A stored named agent (the `default` flag is derived from the name, not stored; records written before policies
 * existed have none, which means the default policy). `deleting` marks an agent whose data is being removed:
 * it no longer exists for any request.
 */
export type AgentRecord = Omit<AgentView, 'default' | 'policy'> & {
  readonly policy?: AgentPolicy;
  readonly deleting?: boolean;
};

/**
 * Named agents of each tenant, in a store every instance that needs them reaches: a NATS KV bucket in the distributed
 * shape (agent-runtime writes it; the gateway reads it to know an agent and its policy without asking agent-runtime),
 * files under the data dir embedded.
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

/** How the API shows a stored agent. */
export function agentView(r: AgentRecord): AgentView {
  return {
    name: r.name,
    persona: r.persona,
    policy: AgentPolicy.parse(r.policy ?? {}),
    default: r.name === DEFAULT_AGENT_NAME,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The answer for a request naming an agent that does not exist: what to do about it. */
export function unknownAgent(name: string): AlfredError {
  return new AlfredError(
    ErrorCode.NotFound,
    `agent ${name} does not exist; create it first with POST /agents {"name": "${name}"} ` +
      `(the default agent ${DEFAULT_AGENT_NAME} always exists)`,
    { resource: 'agent', id: name, create_with: { method: 'POST', path: '/agents', body: { name } } },
  );
}
