import { randomUUID } from 'node:crypto';
import {
  SkillRoutes,
  type SessionMessage,
  type SkillRegistryIndex,
  type SkillSummary,
  type ToolResultBlock,
  type TurnUsage,
} from '#contracts';
import type { Bus } from '#bus';
import { isAlfredError } from '#errors';
import type { Completion, LlmClient, SystemPrompt } from '#llm';
import type { Logger } from '#logging';
import type { SessionStore } from '#sessions';
import type { DiskQuota } from '#sandbox';
import type { AgentService } from '../agents/agent.service.js';
import { buildSystemPrompt, renderTurnMaterial } from '../prompt/system-prompt.builder.js';
import type { BashToolOptions } from '../tools/bash-tool.js';
import { renderSkillBody } from '../tools/skill-tools.js';
import { ToolSet } from '../tools/tool-set.js';
import type { ConfirmOutcome, ToolContext, ToolProvider } from '../tools/tool.types.js';
import { TurnTools } from '../tools/turn-tools.js';
import { Workspace, WORKSPACE_INSIDE, workspaceDirOf } from '../tools/workspace.js';
import { cutToWorkspace, maxCharsFor } from './context-fit.js';
import { ContextKeeper, type TurnState } from './context-keeper.js';
import { loadTurnContext } from './turn-context.loader.js';
import type { TurnStateStore } from './turn-state.store.js';
import { StopReason, stopReasonOf, zeroUsage, type RunningTurn, type TurnOutcome } from './turn.types.js';
import { TtlCache } from './ttl-cache.js';

export interface TurnRunnerOptions {
  readonly maxToolRounds: number;
  readonly maxOutputTokens: number;
  readonly contextWindow: number;
  readonly compactThreshold: number;
  readonly confirmTimeoutMs: number;
  readonly memoryLimit: number;
  /** How long a worker reuses the skill registry's level-1 index (0: fetch it for every turn). */
  readonly skillIndexTtlMs: number;
  readonly workspacesDir: string;
  /** Disk quotas of the workspaces (the file tools' writes; bash's are the sandbox's). */
  readonly quota?: DiskQuota;
  /**
   * The gateway's address as agents reach it (resolved per turn: an embedded gateway's port is known only once it
   * listens).
   */
  readonly apiUrl: () => string;
  readonly bash: Omit<BashToolOptions, 'apiUrl'>;
}

export interface TurnRunnerDeps {
  readonly bus: Bus;
  readonly sessions: SessionStore;
  readonly agents: AgentService;
  readonly llm: LlmClient;
  readonly turnState: TurnStateStore;
  readonly providers: readonly ToolProvider[];
  readonly logger: Logger;
}

/** What a turn needs for every model call, prepared once. */
export interface Prepared {
  readonly tools: TurnTools;
  readonly ctx: ToolContext;
  readonly workspace: Workspace;
  /** The stable system prompt (re-built when the active skill changes). */
  readonly system: () => SystemPrompt;
  /** This turn's material: relevant memories and the environment. */
  readonly material: string;
  /** The session's messages before this turn. */
  readonly history: SessionMessage[];
}

interface LoopResult {
  readonly completed: boolean;
  rounds: number;
  readonly usage: TurnUsage;
  readonly failure?: { code: string; message: string };
}

const NOTE: Record<string, string> = {
  [StopReason.Cancelled]: 'the user cancelled the turn',
  [StopReason.Deadline]: 'the turn deadline passed',
  [StopReason.Shutdown]: 'the worker was shutting down',
  TOOL_ROUND_LIMIT: 'the tool round limit was reached',
};

/**
 * One agent turn: context, then model calls and tool rounds until the model answers without tools, a limit
 * stops it, or it is cancelled. The session is written once at the end with whole rounds (a round is the
 * assistant's tool calls with all their results), or before a fold; a turn that lost its lease writes nothing.
 */
export class TurnRunner {
  /** Per tenant and agent policy: what one tenant created never shows in another's index. */
  private readonly skillIndex = new Map<string, TtlCache<SkillRegistryIndex>>();
  private readonly keeper: ContextKeeper;

  constructor(
    private readonly deps: TurnRunnerDeps,
    private readonly options: TurnRunnerOptions,
  ) {
    this.keeper = new ContextKeeper(deps, options);
  }

  async run(t: RunningTurn): Promise<TurnOutcome> {
    const prepared = await this.prepare(t);
    const message = await cutToWorkspace(
      t.message,
      maxCharsFor(this.options.contextWindow, Infinity) * 2,
      prepared.workspace,
      `message-${t.turnId}`,
    );
    const state: TurnState = { history: prepared.history, pending: [{ role: 'user', content: message }] };
    const loop = await this.loop(t, prepared, state);
    const stopped = t.signal.aborted ? stopReasonOf(t.signal) : undefined;
    let { failure, completed } = loop;
    if (stopped === StopReason.LeaseLost)
      failure ??= { code: 'CONFLICT', message: 'the turn lost its session lease; nothing was written' };
    else {
      try {
        await this.persist(
          t,
          state.pending,
          completed ? undefined : (NOTE[stopped ?? failure?.code ?? ''] ?? failure?.message),
        );
      } catch (err) {
        completed = false;
        failure = isAlfredError(err)
          ? { code: err.code, message: `the turn's messages could not be written: ${err.message}` }
          : { code: 'INTERNAL_ERROR', message: String(err) };
      }
    }
    if (failure) t.emit({ type: 'error', error: failure });
    else if (stopped)
      t.emit({
        type: 'error',
        error: {
          code: stopped === StopReason.Cancelled ? 'CANCELLED' : stopped.toUpperCase(),
          message: NOTE[stopped] ?? stopped,
        },
      });
    const status = completed ? 'completed' : stopped === StopReason.Cancelled ? 'cancelled' : 'failed';
    if (status !== 'cancelled' && stopped !== StopReason.Shutdown && stopped !== StopReason.LeaseLost)
      await this.recordSkillOutcomes(t, prepared, status === 'completed');
    return { status, rounds: loop.rounds, usage: loop.usage };
  }

  /**
   * A skill loaded in a turn that then completed (or failed) gets that as an outcome; a lost record costs only ranking.
   */
  private async recordSkillOutcomes(t: RunningTurn, p: Prepared, success: boolean): Promise<void> {
    for (const name of p.ctx.loadedSkills ?? []) {
      try {
        await this.deps.bus.request(SkillRoutes.feedback, {
          tenant: t.scope.tenant,
          name,
          feedback: { success, by: 'turn' },
        });
      } catch (err) {
        this.deps.logger.warn({ err: String(err), skill: name }, 'skill outcome not recorded');
      }
    }
  }

  /** Reads the agent and context; builds the tools (as the agent's policy permits) and the system prompt. */
  private async prepare(t: RunningTurn): Promise<Prepared> {
    const { bus, sessions, agents } = this.deps;
    const agent = await agents.get(t.scope);
    const session = await sessions.get(t.scope, t.sessionId);
    const context = await loadTurnContext(bus, t.scope, t.message, this.options.memoryLimit, this.deps.logger, () =>
      this.indexFor(JSON.stringify([t.scope.tenant, agent.policy.skills])).get(() =>
        bus.request(SkillRoutes.index, { tenant: t.scope.tenant, only: agent.policy.skills }),
      ),
    );
    const workspace = new Workspace(workspaceDirOf(this.options.workspacesDir, t.scope), this.options.quota);
    const cwd = await workspace.root();
    const apiUrl = this.options.apiUrl();
    const core = ToolSet.core(
      bus,
      { ...this.options.bash, apiUrl },
      context.skills.map((s) => s.name),
    );
    const at = { scope: t.scope, sessionId: t.sessionId };
    const tools = await TurnTools.create(core, this.deps.providers, at, agent.policy);
    let active = await this.activate(t.scope.tenant, tools, context.skills, session.active_skill);
    const ctx: ToolContext = {
      scope: t.scope,
      sessionId: t.sessionId,
      turnId: t.turnId,
      ...(t.apiKey ? { apiKey: t.apiKey } : {}),
      workspace,
      signal: t.signal,
      skills: context.skills,
      loadedSkills: new Set<string>(),
      confirm: (action, subject, prompt) => this.confirm(t, action, subject, prompt),
      activeSkillChanged: async (skill) => {
        await sessions.setActiveSkill(t.scope, t.sessionId, skill, { fence: t.fence });
        active = await this.activate(t.scope.tenant, tools, context.skills, skill);
      },
    };
    const { files, skillIndex } = context;
    const system = () =>
      buildSystemPrompt({
        agent,
        soul: files.soul,
        user: files.user,
        memoryFile: files.memory,
        skillIndex,
        activeSkill: active,
      });
    const material = renderTurnMaterial({
      memories: context.memories,
      now: new Date(),
      workingDirectory: this.options.bash.sandbox?.mode === 'unsafe-off' ? cwd : WORKSPACE_INSIDE,
      apiUrl,
      agent: agent.name,
      sessionId: t.sessionId,
    });
    return { tools, ctx, workspace, system, material, history: session.messages };
  }

  /** Model calls and tool rounds until the model answers without tools, a limit stops it, or the turn is stopped. */
  private async loop(t: RunningTurn, p: Prepared, state: TurnState): Promise<LoopResult> {
    const result: LoopResult = { completed: false, rounds: 0, usage: zeroUsage() };
    try {
      while (!t.signal.aborted) {
        const completion = await this.keeper.call(t, p, state);
        if (!completion) break;
        addUsage(result.usage, completion);
        state.pending.push({ role: 'assistant', content: assistantContent(completion) });
        if (completion.toolUses.length === 0) {
          t.emit({ type: 'message', text: completion.text, stop_reason: completion.stopReason });
          return { ...result, completed: true };
        }
        const results = await this.runTools(t, p, completion);
        if (!results) {
          state.pending.pop();
          break;
        }
        state.pending.push({ role: 'user', content: results });
        if (++result.rounds >= this.options.maxToolRounds) {
          return {
            ...result,
            failure: {
              code: 'TOOL_ROUND_LIMIT',
              message: `stopped after ${result.rounds} tool rounds (ALFRED_MAX_TOOL_ROUNDS)`,
            },
          };
        }
      }
      return result;
    } catch (err) {
      if (!isAlfredError(err)) this.deps.logger.error({ err, turn: t.turnId }, 'turn failed');
      return {
        ...result,
        failure: isAlfredError(err)
          ? { code: err.code, message: err.message }
          : { code: 'INTERNAL_ERROR', message: String(err) },
      };
    }
  }

  /** Runs the round's calls in order; a result too big for the window is kept in the workspace and cut. */
  private async runTools(t: RunningTurn, p: Prepared, completion: Completion): Promise<ToolResultBlock[] | undefined> {
    const results: ToolResultBlock[] = [];
    const maxChars = maxCharsFor(this.options.contextWindow, this.options.bash.maxOutputChars);
    for (const use of completion.toolUses) {
      t.emit({ type: 'tool_call', id: use.id, name: use.name, input: use.input });
      const out = await p.tools.call(use.name, use.input, p.ctx);
      if (t.signal.aborted) return undefined;
      const content = await cutToWorkspace(
        out.content || '(no output)',
        maxChars,
        p.workspace,
        `${t.turnId}-${use.id}`,
      );
      t.emit({ type: 'tool_result', id: use.id, name: use.name, content, is_error: out.isError });
      results.push({ type: 'tool_result', tool_use_id: use.id, content, ...(out.isError ? { is_error: true } : {}) });
    }
    return results;
  }

  private async persist(t: RunningTurn, pending: SessionMessage[], stoppedBecause: string | undefined): Promise<void> {
    // A turn that produced nothing (failed before any model output) leaves the session as it was.
    if (pending.length === 0 || (pending.length === 1 && pending[0]!.role === 'user' && stoppedBecause)) return;
    const messages = [...pending];
    if (stoppedBecause && messages.at(-1)!.role === 'user')
      messages.push({ role: 'assistant', content: `[turn stopped: ${stoppedBecause}]` });
    await this.deps.sessions.append(t.scope, t.sessionId, messages, { fence: t.fence });
  }

  private async confirm(
    t: RunningTurn,
    action: 'activate_skill' | 'tool_call',
    skill: string,
    prompt: string,
  ): Promise<ConfirmOutcome> {
    const requestId = `confirm-${randomUUID().replaceAll('-', '')}`;
    await this.deps.turnState.openConfirmation(
      t.scope,
      t.sessionId,
      { request_id: requestId, turn_id: t.turnId, skill },
      this.options.confirmTimeoutMs + 60_000,
    );
    t.emit({ type: 'confirmation_request', request_id: requestId, action, skill, prompt });
    return t.waitForConfirmation(requestId);
  }

  /** The active skill's body for the system prompt, and its declared tools offered. */
  private async activate(
    tenant: string,
    tools: TurnTools,
    skills: readonly SkillSummary[],
    name: string | null,
  ): Promise<string | undefined> {
    await tools.declare(name ? skills.find((s) => s.name === name)?.allowed_tools : undefined);
    if (!name) return undefined;
    try {
      return renderSkillBody(await this.deps.bus.request(SkillRoutes.get, { tenant, name }));
    } catch (err) {
      this.deps.logger.warn({ err: String(err), skill: name }, 'active skill could not be loaded');
      return undefined;
    }
  }

  private indexFor(tenantAndPolicy: string): TtlCache<SkillRegistryIndex> {
    let cache = this.skillIndex.get(tenantAndPolicy);
    if (!cache) {
      if (this.skillIndex.size > 64) this.skillIndex.clear();
      cache = new TtlCache(this.options.skillIndexTtlMs);
      this.skillIndex.set(tenantAndPolicy, cache);
    }
    return cache;
  }
}

function assistantContent(c: Completion): SessionMessage['content'] {
  const blocks = c.content.filter((b) => b.type !== 'text' || b.text.length > 0);
  return blocks.length > 0 ? blocks : '(empty reply)';
}

function addUsage(usage: TurnUsage, c: Completion): void {
  const u = usage as { -readonly [K in keyof TurnUsage]: TurnUsage[K] };
  u.input_tokens += c.usage.inputTokens;
  u.output_tokens += c.usage.outputTokens;
  u.cache_creation_input_tokens += c.usage.cacheCreationInputTokens;
  u.cache_read_input_tokens += c.usage.cacheReadInputTokens;
  u.model_calls += 1;
}
