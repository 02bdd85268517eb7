import { rm } from 'node:fs/promises';
import {
  DEFAULT_AGENT_NAME,
  ErrorCode,
  MemoryRoutes,
  type AgentCreateBody,
  type AgentDeleted,
  type AgentList,
  type AgentView,
  type Scope,
} from '#contracts';
import type { AgentFileStore } from '#agent-files';
import type { Bus } from '#bus';
import { AlfredError } from '#errors';
import type { SessionStore } from '#sessions';
import type { AgentRecord, AgentStore } from './agent.store.js';
import { workspaceDirOf } from '../tools/workspace.js';

const view = (r: AgentRecord): AgentView => ({ ...r, default: r.name === DEFAULT_AGENT_NAME });
const PAGE = 100;

/**
 * Named agents: the persona seed lives here; USER.md / SOUL.md / MEMORY.md, memories, sessions and the
 * workspace are keyed by the name. `alfred` always exists (created on first need, idempotently), and so does
 * any agent a session or turn names (X-Alfred-Agent), with an empty persona.
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
    const { record, created } = await this.agents.create(tenant, { name: body.name, persona: body.persona, created_at: now, updated_at: now });
    if (!created && body.name !== DEFAULT_AGENT_NAME) throw new AlfredError(ErrorCode.Conflict, `agent ${body.name} already exists`, { name: body.name });
    if (!created) return this.patch({ tenant, agent: body.name }, body.persona);
    return view(record);
  }

  /** The agent, created with an empty persona if it was never stored. */
  async ensure(scope: Scope): Promise<AgentView> {
    const found = await this.agents.get(scope.tenant, scope.agent);
    if (found) return view(found);
    const now = new Date().toISOString();
    return view((await this.agents.create(scope.tenant, { name: scope.agent, persona: '', created_at: now, updated_at: now })).record);
  }

  async get(scope: Scope): Promise<AgentView> {
    if (scope.agent === DEFAULT_AGENT_NAME) return this.ensure(scope);
    const found = await this.agents.get(scope.tenant, scope.agent);
    if (!found) throw AlfredError.notFound('agent', scope.agent);
    return view(found);
  }

  async list(tenant: string): Promise<AgentList> {
    await this.ensure({ tenant, agent: DEFAULT_AGENT_NAME });
    const agents = (await this.agents.list(tenant)).map(view).sort((a, b) => (a.default === b.default ? a.name.localeCompare(b.name) : a.default ? -1 : 1));
    return { agents, total: agents.length };
  }

  async patch(scope: Scope, persona: string): Promise<AgentView> {
    const current = await this.get(scope);
    const record: AgentRecord = { name: current.name, persona, created_at: current.created_at, updated_at: new Date().toISOString() };
    if (!(await this.agents.update(scope.tenant, record))) throw AlfredError.notFound('agent', scope.agent);
    return view(record);
  }

  /**
   * Deletes the agent with its data: memories, sessions, agent files, workspace. `confirm` must repeat the
   * name. The record goes last, so an interrupted delete can be repeated and finishes the job.
   */
  async delete(scope: Scope, confirm: string | undefined): Promise<AgentDeleted> {
    if (scope.agent === DEFAULT_AGENT_NAME) {
      throw new AlfredError(ErrorCode.Forbidden, `the default agent ${DEFAULT_AGENT_NAME} cannot be deleted`, { name: scope.agent });
    }
    await this.get(scope);
    if (confirm !== scope.agent) {
      throw new AlfredError(ErrorCode.BadRequest, `deleting agent ${scope.agent} removes its memories, sessions and files: confirm with ?confirm=${scope.agent}`, {
        name: scope.agent,
        confirm: scope.agent,
      });
    }
    const memories = await this.deleteMemories(scope);
    const sessions = await this.deleteSessions(scope);
    const files = await this.files.deleteAll(scope);
    await rm(workspaceDirOf(this.workspacesDir, scope), { recursive: true, force: true });
    await this.agents.delete(scope.tenant, scope.agent);
    return { name: scope.agent, deleted: true, memories_deleted: memories, sessions_deleted: sessions, files_deleted: files };
  }

  private async deleteMemories(scope: Scope): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.bus.request(MemoryRoutes.list, { scope, query: { limit: PAGE, offset: 0 } });
      if (page.memories.length === 0) return deleted;
      const res = await this.bus.request(MemoryRoutes.batchDelete, { scope, ids: page.memories.map((m) => m.id) });
      deleted += res.deleted;
      if (res.deleted === 0) return deleted;
    }
  }

  private async deleteSessions(scope: Scope): Promise<number> {
    let deleted = 0;
    for (;;) {
      const page = await this.sessions.list(scope, { limit: PAGE, offset: 0 });
      if (page.sessions.length === 0) return deleted;
      for (const s of page.sessions) if (await this.sessions.delete(scope, s.id)) deleted++;
    }
  }
}
