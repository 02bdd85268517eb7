import {
  agentFileName,
  MemoryRoutes,
  type AgentFileKind,
  type LearnBody,
  type LearnResult,
  type Scope,
} from '#contracts';
import type { AgentFileAccess } from '#agent-files';
import type { Bus, MessageContext } from '#bus';
import { isConflict } from '#errors';
import { retry } from '#retry';
import { SecretGuard } from '#content-safety';
import { modelOrFallback, type LlmClient } from '#llm';
import { appendObservation, OBSERVATIONS_HEADER } from './agent-file-editor.js';
import { modelDecision } from './model-learner.js';
import { alreadySays } from './observation-match.js';

export interface LearnerOptions {
  /** Below this confidence an observation is recorded as a pending memory and the file stays as it is. */
  readonly minConfidence: number;
  readonly requireModel: boolean;
  /** Checks every observation for credentials before anything is written (default: refuse them all). */
  readonly secrets?: SecretGuard;
}

/** Tag of the memories that hold observations held back for low confidence. */
export const PENDING_TAG = 'pending-observation';

/** Tries of a learn whose write lost to a concurrent one (each reads the file again). */
const ATTEMPTS = 3;

/** Updates USER.md / SOUL.md from observations, keeping every version. */
export class LearnerService {
  constructor(
    private readonly files: AgentFileAccess,
    private readonly llm: LlmClient,
    private readonly bus: Bus,
    private readonly options: LearnerOptions,
  ) {}

  async learn(scope: Scope, learnBody: LearnBody, context?: MessageContext): Promise<LearnResult> {
    // A secret in an observation would end up in USER.md/SOUL.md (or a pending memory): refused (or redacted) first.
    const observation = await (this.options.secrets ?? new SecretGuard()).admit(scope.tenant, learnBody.observation, {
      field: 'observation',
    });
    const req = { ...learnBody, observation };
    const confidence = req.confidence ?? 1;
    if (confidence < this.options.minConfidence) return this.holdBack(scope, req, confidence, context);
    const mode = modelOrFallback(this.llm, this.options.requireModel);
    return retry(() => this.learnOnce(scope, req.target, req.observation, mode), {
      attempts: ATTEMPTS,
      retryIf: isConflict,
    });
  }

  private async learnOnce(
    scope: Scope,
    target: 'user' | 'soul',
    observation: string,
    mode: 'model' | 'fallback',
  ): Promise<LearnResult> {
    const file = agentFileName[target];
    const current = await this.files.read(scope, target);
    const said = alreadySays(current.content, observation);
    if (said) return { status: 'no_change', file, reason: said };
    let content: string;
    let changes: string[];
    if (mode === 'model') {
      const decision = await modelDecision(this.llm, target, current.content, observation);
      if (decision.status === 'no_change') return { status: 'no_change', file, reason: decision.reason };
      ({ content, changes } = decision);
    } else {
      content = appendObservation(current.content, observation);
      changes = [`added under "${OBSERVATIONS_HEADER}": ${observation}`];
    }
    const base = await this.ensureBaseVersion(scope, target, current.version, current.content);
    const version = await this.files.write(scope, target, content, {
      reason: `learn: ${observation.slice(0, 200)}`,
      expectedVersion: base,
      writer: { via: 'learn' },
    });
    return { status: 'updated', file, changes, backup_created: `${file}@v${base}`, version };
  }

  /** A never-written file gets its default content as version 1 first, so the change can be restored. */
  private async ensureBaseVersion(
    scope: Scope,
    target: AgentFileKind,
    version: number,
    content: string,
  ): Promise<number> {
    if (version > 0) return version;
    return this.files.write(scope, target, content, { reason: 'initial content', expectedVersion: 0 });
  }

  private async holdBack(
    scope: Scope,
    req: LearnBody,
    confidence: number,
    context?: MessageContext,
  ): Promise<LearnResult> {
    const file = agentFileName[req.target];
    const memory = await this.bus.request(
      MemoryRoutes.create,
      {
        scope,
        memory: {
          content: `Pending observation for ${file} (confidence ${confidence}): ${req.observation}`,
          importance: confidence,
          tags: [PENDING_TAG, req.target],
        },
        source: 'daily',
        writer: { via: 'learn' },
      },
      { context },
    );
    return {
      status: 'no_change',
      file,
      reason:
        `confidence ${confidence} is below ${this.options.minConfidence}: recorded as a pending ` +
        `observation (memory ${memory.id}), ${file} unchanged`,
      pending_memory_id: memory.id,
    };
  }
}
