import { ErrorCode, type CompactResult, type Scope, type SessionMessage } from '#contracts';
import { AlfredError, isConflict } from '#errors';
import { retry } from '#retry';
import { modelOrFallback, type LlmClient, type TokenMeasure } from '#llm';
import { estimateTokens } from '#text';
import type { SessionAccess } from '#sessions';
import { planByTokens, planCompaction } from './compaction-plan.js';
import { extractiveSummary } from './extractive-summarizer.js';
import { modelSummary } from './model-summarizer.js';

export interface CompactorOptions {
  readonly defaultPreserveRecent: number;
  readonly requireModel: boolean;
}

export interface CompactRequest {
  readonly sessionId: string;
  readonly instructions?: string;
  readonly preserveRecent?: number;
  /** Fit the compacted session into about this many tokens (see CompactorRoutes.compact). */
  readonly targetTokens?: number;
}

// A replace refused because someone appended meanwhile is retried on the fresh session this many times.
const ATTEMPTS = 3;

/** Folds a session's older messages into one summary message; recent messages and skill loads stay verbatim. */
export class CompactorService {
  constructor(
    private readonly sessions: Pick<SessionAccess, 'get' | 'replace'>,
    private readonly llm: LlmClient,
    private readonly options: CompactorOptions,
  ) {}

  async compact(scope: Scope, req: CompactRequest): Promise<CompactResult> {
    const mode = modelOrFallback(this.llm, this.options.requireModel);
    return retry(() => this.compactOnce(scope, req, mode), { attempts: ATTEMPTS, retryIf: isConflict });
  }

  private async compactOnce(scope: Scope, req: CompactRequest, mode: 'model' | 'fallback'): Promise<CompactResult> {
    const session = await this.sessions.get(scope, req.sessionId);
    const before = await this.measure(session.messages);
    const plan = req.targetTokens
      ? planByTokens(session.messages, Math.floor(req.targetTokens / 2), (m) => estimateTokens(m))
      : planCompaction(session.messages, req.preserveRecent ?? this.options.defaultPreserveRecent);
    if (!plan) {
      return this.result(
        before,
        before,
        `Nothing to compact: the session has ${session.messages.length} messages, all kept.`,
        0,
        session.version,
      );
    }
    const summary =
      mode === 'model'
        ? await modelSummary(this.llm, plan.summarised, req.instructions, req.targetTokens)
        : extractiveSummary(plan.summarised, req.instructions);
    const messages: SessionMessage[] = [{ role: 'user', content: summary }, ...plan.skillMessages, ...plan.recent];
    const after = await this.measure(messages);
    const version = await this.sessions.replace(scope, req.sessionId, {
      messages,
      expectedVersion: session.version,
      tokens: { count: after.tokens, source: after.source },
    });
    return this.result(before, after, summary, plan.summarised.length, version);
  }

  private measure(messages: readonly SessionMessage[]): Promise<TokenMeasure> {
    if (messages.length === 0)
      return Promise.resolve({ tokens: 0, source: this.llm.isConfigured ? 'model' : 'estimate' });
    return this.llm.measure({ messages });
  }

  private result(
    before: TokenMeasure,
    after: TokenMeasure,
    summary: string,
    compacted: number,
    version: number,
  ): CompactResult {
    if (before.source !== after.source)
      throw new AlfredError(ErrorCode.Internal, 'token counts came from different sources');
    return {
      status: 'completed',
      tokens_before: before.tokens,
      tokens_after: after.tokens,
      tokens_saved: before.tokens - after.tokens,
      summary,
      messages_compacted: compacted,
      token_source: before.source,
      session_version: version,
    };
  }
}
