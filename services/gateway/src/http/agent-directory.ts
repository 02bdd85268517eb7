import { DEFAULT_AGENT_NAME, DEFAULT_AGENT_POLICY, type AgentPolicy, type Scope } from '#contracts';
import { agentView, unknownAgent, type AgentRecord, type AgentStore } from '#agent-registry';
import type { MessageContext } from '#bus';
import { dependencyUnavailable, isAlfredError } from '#errors';

/**
 * Whether an agent exists and what its policy permits, as the gateway learns it for a request acting as that agent:
 * NOT_FOUND (saying how to create it) unless it exists; `alfred` always exists.
 */
export interface AgentDirectory {
  policyOf(scope: Scope, context: MessageContext): Promise<AgentPolicy>;
  /** Stops what the directory holds open (the registry's watch, embedded). */
  close(): Promise<void>;
}

/**
 * Read from the agent registry agent-runtime writes (distributed, its KV bucket; embedded, its files), so a request
 * for a named agent does not need agent-runtime to answer. `alfred` without a record (never changed) has the default
 * policy.
 */
export class RegistryAgentDirectory implements AgentDirectory {
  constructor(
    private readonly registry: AgentStore,
    /** Whether the registry can be reached: while NATS is away it cannot, so the request is a fast 503. */
    private readonly connected: () => boolean,
    /** What an unreachable registry is called in the 503. */
    private readonly dependency = 'NATS',
  ) {}

  async policyOf(scope: Scope): Promise<AgentPolicy> {
    const what = `read agent ${scope.agent} from the agent registry`;
    if (!this.connected()) throw dependencyUnavailable(this.dependency, what);
    let record: AgentRecord | undefined;
    try {
      record = await this.registry.get(scope.tenant, scope.agent);
    } catch (err) {
      if (isAlfredError(err)) throw err;
      throw dependencyUnavailable(this.dependency, `${what} (${String(err)})`);
    }
    if (record && !record.deleting) return agentView(record).policy;
    if (scope.agent === DEFAULT_AGENT_NAME) return DEFAULT_AGENT_POLICY;
    throw unknownAgent(scope.agent);
  }

  close(): Promise<void> {
    return this.registry.close();
  }
}

/** The DI token of the gateway's AgentDirectory. */
export const AGENT_DIRECTORY = Symbol('AGENT_DIRECTORY');

/** The policy of the agent a request acts as: the one the guard read for a named agent, else the directory's. */
export function callerPolicy(
  directory: AgentDirectory,
  c: { scope: Scope; context: MessageContext; policy?: AgentPolicy },
): Promise<AgentPolicy> {
  return c.policy ? Promise.resolve(c.policy) : directory.policyOf(c.scope, c.context);
}
