import { randomUUID } from 'node:crypto';
import { CompactorRoutes, SkillRoutes, type SessionMessage, type SkillRegistryIndex, type ToolResultBlock, type TurnUsage } from '#contracts';
import type { Bus } from '#bus';
import { isAlfredError } from '#errors';
import { estimateTokens, type Completion, type LlmClient, type LlmTool, type SystemPrompt } from '#llm';
import type { Logger } from '#logging';
import type { SessionStore } from '#sessions';
import type { AgentService } from '../agents/agent.service.js';
import { buildSystemPrompt } from '../prompt/system-prompt.builder.js';
import type { BashToolOptions } from '../tools/bash-tool.js';
import { renderSkillBody } from '../tools/skill-tools.js';
import { ToolSet } from '../tools/tool-set.js';
import type { ToolContext, ToolProvider } from '../tools/tool.types.js';
import { Workspace, workspaceDirOf } from '../tools/workspace.js';
import { loadTurnContext } from './turn-context.loader.js';
import type { TurnStateStore } from './turn-state.store.js';
import { StopReason, stopReasonOf, zeroUsage, type RunningTurn, type TurnOutcome } from './turn.types.js';
import { streamCompletion } from './model-call.js';
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
  readonly bash: BashToolOptions;
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

interface Prepared {
  readonly history: SessionMessage[];
  readonly tools: ToolSet;
  readonly ctx: ToolContext;
  readonly system: () => SystemPrompt;
}

interface TurnState {
  history: SessionMessage[];
  pending: SessionMessage[];
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
 * assistant's tool calls with all their results), or before a compaction; a turn that lost its lease writes nothing.
 */
export class TurnRunner {
  /** Per tenant: what one tenant created never shows in another's index. */
  private readonly skillIndex = new Map<string, TtlCache<SkillRegistryIndex>>();

  constructor(
    private readonly deps: TurnRunnerDeps,
    private readonly options: TurnRunnerOptions,
  ) {
  }

  async run(t: RunningTurn): Promise<TurnOutcome> {
    const prepared = await this.prepare(t);
    const state = { history: prepared.history, pending: [{ role: 'user', content: t.message }] as SessionMessage[] };
    const loop = await this.loop(t, prepared, state);
    const stopped = t.signal.aborted ? stopReasonOf(t.signal) : undefined;
    let { failure, completed } = loop;
    if (stopped === StopReason.LeaseLost) failure ??= { code: 'CONFLICT', message: 'the turn lost its session lease; nothing was written' };
    else {
      try {
        await this.persist(t, state.pending, completed ? undefined : NOTE[stopped ?? failure?.code ?? ''] ?? failure?.message);
      } catch (err) {
        completed = false;
        failure = isAlfredError(err) ? { code: err.code, message: `the turn's messages could not be written: ${err.message}` } : { code: 'INTERNAL_ERROR', message: String(err) };
      }
    }
    if (failure) t.emit({ type: 'error', error: failure });
    else if (stopped) t.emit({ type: 'error', error: { code: stopped === StopReason.Cancelled ? 'CANCELLED' : stopped.toUpperCase(), message: NOTE[stopped] ?? stopped } });
    const status = completed ? 'completed' : stopped === StopReason.Cancelled ? 'cancelled' : 'failed';
    return { status, rounds: loop.rounds, usage: loop.usage };
  }

  /** Reads the session, agent and context; builds the tools and the (re-buildable) system prompt. */
  private async prepare(t: RunningTurn): Promise<Prepared> {
    const { bus, sessions, agents } = this.deps;
    const session = await sessions.get(t.scope, t.sessionId);
    const agent = await agents.ensure(t.scope);
    const context = await loadTurnContext(bus, t.scope, t.message, this.options.memoryLimit, this.deps.logger, () =>
      this.indexCache(t.scope.tenant).get(() => bus.request(SkillRoutes.index, { tenant: t.scope.tenant })),
    );
    const workspace = new Workspace(workspaceDirOf(this.options.workspacesDir, t.scope));
    const cwd = await workspace.root();
    let activeSkill = session.active_skill ? await this.skillText(t.scope.tenant, session.active_skill) : undefined;
    const extra = (await Promise.all(this.deps.providers.map((p) => p.tools({ scope: t.scope, sessionId: t.sessionId })))).flat();
    const tools = ToolSet.core(bus, this.options.bash, context.skills.map((s) => s.name), extra);
    const ctx: ToolContext = {
      scope: t.scope,
      sessionId: t.sessionId,
      ...(t.apiKey ? { apiKey: t.apiKey } : {}),
      workspace,
      signal: t.signal,
      skills: context.skills,
      confirm: (action, subject, prompt) => this.confirm(t, action, subject, prompt),
      activeSkillChanged: async (skill) => {
        await sessions.setActiveSkill(t.scope, t.sessionId, skill);
        activeSkill = skill ? await this.skillText(t.scope.tenant, skill) : undefined;
      },
    };
    const { files, memories, skillIndex } = context;
    const system = (): SystemPrompt =>
      buildSystemPrompt(
        { agent, soul: files.soul, user: files.user, memoryFile: files.memory, memories, skillIndex, activeSkill },
        { now: new Date(), workingDirectory: cwd, apiUrl: this.options.bash.apiUrl, sessionId: t.sessionId },
      );
    return { history: session.messages, tools, ctx, system };
  }

  /** Model calls and tool rounds until the model answers without tools, a limit stops it, or the turn is stopped. */
  private async loop(t: RunningTurn, p: Prepared, state: TurnState): Promise<LoopResult> {
    const result: LoopResult = { completed: false, rounds: 0, usage: zeroUsage() };
    try {
      while (!t.signal.aborted) {
        await this.maybeCompact(t, state, p.system(), p.tools.definitions);
        const messages = [...state.history, ...state.pending];
        const completion = await streamCompletion(this.deps.llm, { system: p.system(), messages, tools: p.tools.definitions, maxTokens: this.options.maxOutputTokens }, t);
        if (!completion) break;
        addUsage(result.usage, completion);
        state.pending.push({ role: 'assistant', content: assistantContent(completion) });
        if (completion.toolUses.length === 0) {
          t.emit({ type: 'message', text: completion.text, stop_reason: completion.stopReason });
          return { ...result, completed: true };
        }
        const results = await this.runTools(t, p.tools, p.ctx, completion);
        if (!results) {
          state.pending.pop();
          break;
        }
        state.pending.push({ role: 'user', content: results });
        if (++result.rounds >= this.options.maxToolRounds) {
          return { ...result, failure: { code: 'TOOL_ROUND_LIMIT', message: `stopped after ${result.rounds} tool rounds (ALFRED_MAX_TOOL_ROUNDS)` } };
        }
      }
      return result;
    } catch (err) {
      if (!isAlfredError(err)) this.deps.logger.error({ err, turn: t.turnId }, 'turn failed');
      return { ...result, failure: isAlfredError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL_ERROR', message: String(err) } };
    }
  }

  private async runTools(t: RunningTurn, tools: ToolSet, ctx: ToolContext, completion: Completion): Promise<ToolResultBlock[] | undefined> {
    const results: ToolResultBlock[] = [];
    for (const use of completion.toolUses) {
      t.emit({ type: 'tool_call', id: use.id, name: use.name, input: use.input });
      const out = await tools.call(use.name, use.input, ctx);
      if (t.signal.aborted) return undefined;
      t.emit({ type: 'tool_result', id: use.id, name: use.name, content: out.content, is_error: out.isError });
      results.push({ type: 'tool_result', tool_use_id: use.id, content: out.content || '(no output)', ...(out.isError ? { is_error: true } : {}) });
    }
    return results;
  }

  /** Past the configured share of the window: write the finished rounds, compact, continue on the compacted session. */
  private async maybeCompact(t: RunningTurn, state: TurnState, system: SystemPrompt, tools: LlmTool[]): Promise<void> {
    const tokens = estimateTokens({ system, messages: [...state.history, ...state.pending], tools });
    // Nothing older than this turn to fold: compaction could not help (the round limit bounds the turn itself).
    if (tokens <= this.options.compactThreshold * this.options.contextWindow || state.history.length === 0) return;
    const { sessions, bus } = this.deps;
    if (state.pending.length > 0) await sessions.append(t.scope, t.sessionId, state.pending);
    const res = await bus.request(CompactorRoutes.compact, { scope: t.scope, session_id: t.sessionId }, { timeoutMs: 120_000 });
    state.history = (await sessions.get(t.scope, t.sessionId)).messages;
    state.pending = [];
    t.emit({ type: 'compacted', tokens_before: res.tokens_before, tokens_after: res.tokens_after });
  }

  private async persist(t: RunningTurn, pending: SessionMessage[], stoppedBecause: string | undefined): Promise<void> {
    // A turn that produced nothing (failed before any model output) leaves the session as it was.
    if (pending.length === 0 || (pending.length === 1 && pending[0]!.role === 'user' && stoppedBecause)) return;
    const messages = [...pending];
    if (stoppedBecause && messages.at(-1)!.role === 'user') messages.push({ role: 'assistant', content: `[turn stopped: ${stoppedBecause}]` });
    await this.deps.sessions.append(t.scope, t.sessionId, messages);
  }

  private async confirm(t: RunningTurn, action: 'activate_skill' | 'tool_call', skill: string, prompt: string): Promise<boolean> {
    const requestId = `confirm-${randomUUID().replaceAll('-', '')}`;
    await this.deps.turnState.openConfirmation(t.scope, t.sessionId, { request_id: requestId, turn_id: t.turnId, skill }, this.options.confirmTimeoutMs + 60_000);
    t.emit({ type: 'confirmation_request', request_id: requestId, action, skill, prompt });
    return t.waitForConfirmation(requestId);
  }

  private indexCache(tenant: string): TtlCache<SkillRegistryIndex> {
    let cache = this.skillIndex.get(tenant);
    if (!cache) this.skillIndex.set(tenant, (cache = new TtlCache(this.options.skillIndexTtlMs)));
    return cache;
  }

  private async skillText(tenant: string, name: string): Promise<string | undefined> {
    try {
      return renderSkillBody(await this.deps.bus.request(SkillRoutes.get, { tenant, name }));
    } catch (err) {
      this.deps.logger.warn({ err: String(err), skill: name }, 'active skill could not be loaded');
      return undefined;
    }
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
