import { CompactorRoutes, ErrorCode, type SessionMessage } from '#contracts';
import type { Bus } from '#bus';
import { AlfredError, isAlfredError } from '#errors';
import type { Completion, CompleteRequest, LlmClient } from '#llm';
import { estimateTokens } from '#text';
import type { SessionStore } from '#sessions';
import { streamCompletion } from './model-call.js';
import { buildTurnRequest } from './turn-request.js';
import type { Prepared } from './turn-runner.js';
import type { RunningTurn } from './turn.types.js';

/** The messages of a running turn: the session's before it (or since the last fold) and its own so far. */
export interface TurnState {
  history: SessionMessage[];
  pending: SessionMessage[];
  /** Messages the previous model call of this turn sent: where its cached tail ends. */
  previousLength?: number;
}

export interface ContextOptions {
  readonly contextWindow: number;
  readonly compactThreshold: number;
  readonly maxOutputTokens: number;
}

// After a "prompt is too long" answer the fold aims lower than the threshold, so the retry fits.
const RETRY_SHARE = 0.5;

/**
 * Keeps every model call of a turn inside the context window: past the threshold the finished rounds are written
 * and the session folded (by size, so a few huge messages cannot defeat it), inside a turn as between turns; a
 * "prompt is too long" answer folds harder and retries once. What cannot fit at all fails with CONTEXT_TOO_LONG
 * saying why, and leaves the session usable.
 */
export class ContextKeeper {
  constructor(
    private readonly deps: { readonly bus: Bus; readonly sessions: SessionStore; readonly llm: LlmClient },
    private readonly options: ContextOptions,
  ) {}

  async call(t: RunningTurn, p: Prepared, state: TurnState): Promise<Completion | undefined> {
    if (this.estimate(p, state) > this.options.compactThreshold * this.options.contextWindow)
      await this.fold(t, p, state, this.options.compactThreshold);
    try {
      return await this.stream(t, p, state);
    } catch (err) {
      if (!(isAlfredError(err) && err.code === ErrorCode.ContextTooLong) || t.signal.aborted) throw err;
      await this.fold(t, p, state, Math.min(RETRY_SHARE, this.options.compactThreshold));
      return this.stream(t, p, state);
    }
  }

  private request(p: Prepared, state: TurnState): CompleteRequest {
    return buildTurnRequest({
      system: p.system(),
      tools: p.tools.definitions,
      history: state.history,
      material: p.material,
      pending: state.pending,
      ...(state.previousLength === undefined ? {} : { previousLength: state.previousLength }),
      maxTokens: this.options.maxOutputTokens,
    });
  }

  private estimate(p: Prepared, state: TurnState): number {
    return estimateTokens(this.request(p, state));
  }

  private async stream(t: RunningTurn, p: Prepared, state: TurnState): Promise<Completion | undefined> {
    const req = this.request(p, state);
    const completion = await streamCompletion(this.deps.llm, req, t);
    state.previousLength = req.messages.length;
    return completion;
  }

  /** Writes the turn's finished rounds and folds the session so the next call takes about `share` of the window. */
  private async fold(t: RunningTurn, p: Prepared, state: TurnState, share: number): Promise<void> {
    const { contextWindow } = this.options;
    const fixed = estimateTokens({
      system: p.system(),
      tools: p.tools.definitions,
      messages: [{ role: 'user', content: p.material }],
    });
    const room = Math.floor(share * contextWindow) - fixed;
    if (room < 200) {
      throw new AlfredError(
        ErrorCode.ContextTooLong,
        `the system prompt, tools and this turn's context alone take about ${fixed} tokens of the ` +
          `${contextWindow}-token window (ALFRED_CONTEXT_WINDOW): shorten MEMORY.md, the persona or the skill index`,
      );
    }
    const { sessions, bus } = this.deps;
    if (state.pending.length > 0) await sessions.append(t.scope, t.sessionId, state.pending, { fence: t.fence });
    const res = await bus.request(
      CompactorRoutes.compact,
      { scope: t.scope, session_id: t.sessionId, target_tokens: Math.floor(room / 2) },
      { timeoutMs: 120_000 },
    );
    state.history = (await sessions.get(t.scope, t.sessionId)).messages;
    state.pending = [];
    state.previousLength = undefined;
    if (res.messages_compacted > 0)
      t.emit({ type: 'compacted', tokens_before: res.tokens_before, tokens_after: res.tokens_after });
    else if (this.estimate(p, state) > contextWindow) {
      throw new AlfredError(
        ErrorCode.ContextTooLong,
        `nothing more can be folded and the conversation still needs about ${this.estimate(p, state)} tokens ` +
          `of the ${contextWindow}-token window`,
      );
    }
  }
}
