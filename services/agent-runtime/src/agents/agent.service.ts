import { rm } from 'node:fs/promises';
import {
  DEFAULT_AGENT_NAME,
  ErrorCode,
  MemoryRoutes,
  type AgentCreateBody,
  type AgentDeleted,
  type AgentList,
  type AgentPatchBody,
  type AgentView,
  type Scope,
} from '#contracts';
import type { AgentFileStore } from '#agent-files';
import type { Bus } from '#bus';
import { AlfredError } from '#errors';
import type { SessionStore } from '#sessions';
import { agentView as view, unknownAgent, type AgentRecord, type AgentStore } from '#agent-registry';
import { workspaceDirOf } from '../tools/workspace.js';

/**
 * Named agents: the persona seed and policy live here; USER.md / SOUL.md / MEMORY.md, memories, checkpoints,
 * remediations, sessions and the workspace are keyed by the name. `alfred` always exists (created on first need,
 * idempotently); any other agent exists only once created, and everything it owned goes with it.
 */
export class AgentService {
  constructor(
    private readonly agents: AgentStore,
    private readonly sessions: SessionStore,
    private readonly files: AgentFileStore,
    private readonly bus: Bus,
    private readonly workspacesDir: string,
  ) {}

  async create(tenant: string, body: AgentCreateBody): Promise<AgentView> {
    const now = new Date().toISOString();
    const record: AgentRecord = {
      name: body.name,
      persona: body.persona,
      ...(body.policy ? { policy: body.policy } : {}),
      created_at: now,
      updated_at: now,
    };
    const { record: stored, created } = await this.agents.create(tenant, record);
    if (!created && stored.deleting)
      throw new AlfredError(ErrorCode.Conflict, `agent ${body.name} is being deleted; try again in a moment`, {
        name: body.name,
      });
    if (!created && body.name !== DEFAULT_AGENT_NAME)
      throw new AlfredError(ErrorCode.Conflict, `agent ${body.name} already exists`, { name: body.name });
    if (!created)
      return this.patch(
        { tenant, agent: body.name },
        { persona: body.persona, ...(body.policy ? { policy: body.policy } : {}) },
      );
    return view(stored);
  }

  /** The agent; NOT_FOUND (saying how to create it) unless it exists. `alfred` is created on first need. */
  async get(scope: Scope): Promise<AgentView> {
    const found = await this.agents.get(scope.tenant, scope.agent);
    if (found && !found.deleting) return view(found);
    if (scope.agent !== DEFAULT_AGENT_NAME) throw unknownAgent(scope.agent);
    const now = new Date().toISOString();
    return view(
      (await this.agents.create(scope.tenant, { name: scope.agent, persona: '', created_at: now, updated_at: now }))
        .record,
    );
  }

  async list(tenant: string): Promise<AgentList> {
    await this.get({ tenant, agent: DEFAULT_AGENT_NAME });
    const agents = (await this.agents.list(tenant))
      .filter((r) => !r.deleting)
      .map(view)
      .sort((a, b) => (a.default === b.default ? a.name.localeCompare(b.name) : a.default ? -1 : 1));
    return { agents, total: agents.length };
  }

  async patch(scope: Scope, patch: AgentPatchBody): Promise<AgentView> {
    const current = await this.get(scope);
    const policy = patch.policy ? { ...current.policy, ...patch.policy } : current.policy;
    const record: AgentRecord = {
      name: current.name,
      persona: patch.persona ?? current.persona,
      policy,
      created_at: current.created_at,
      updated_at: new Date().toISOString(),
    };
    if (!(await this.agents.update(scope.tenant, record))) throw unknownAgent(scope.agent);
    return view(record);
  }

  /**
   * Deletes the agent with everything it owned: memories, checkpoints, remediations, sessions, agent files,
   * workspace. `confirm` must repeat the name. The agent is marked first (from then on no request finds it, so
   * nothing new is created for it) and its record goes last, so an interrupted delete can be repeated.
   */
  async delete(scope: Scope, confirm: string | undefined): Promise<AgentDeleted> {
    if (scope.agent === DEFAULT_AGENT_NAME) {
      throw new AlfredError(ErrorCode.Forbidden, `the default agent ${DEFAULT_AGENT_NAME} cannot be deleted`, {
        name: scope.agent,
      });
    }
    const record = await this.agents.get(scope.tenant, scope.agent);
    if (!record) throw unknownAgent(scope.agent);
    if (confirm !== scope.agent) {
      throw new AlfredError(
        ErrorCode.BadRequest,
        `deleting agent ${scope.agent} removes its memories, sessions and files: confirm with ?confirm=${scope.agent}`,
        {
          name: scope.agent,
          confirm: scope.agent,
        },
      );
    }
    if (!record.deleting) await this.agents.update(scope.tenant, { ...record, deleting: true });
    const purged = await this.bus.request(MemoryRoutes.purgeAgent, { scope });
    const sessions = await this.sessions.deleteAll(scope);
    const files = await this.files.deleteAll(scope);
    await rm(workspaceDirOf(this.workspacesDir, scope), { recursive: true, force: true });
    await this.agents.delete(scope.tenant, scope.agent);
    return {
      name: scope.agent,
      deleted: true,
      memories_deleted: purged.memories,
      sessions_deleted: sessions,
      files_deleted: files,
      checkpoints_deleted: purged.checkpoints,
      remediations_deleted: purged.remediations,
    };
  }
}
