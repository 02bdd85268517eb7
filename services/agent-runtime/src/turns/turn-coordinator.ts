import { CredentialRoutes, ErrorCode, TurnTopics, type Scope, type TurnControl, type TurnEvent } from '#contracts';
import { type Bus, type TopicSubscription } from '#bus';
import { AlfredError, dependencyUnavailable, isAlfredError } from '#errors';
import { modelNotConfigured, type LlmClient } from '#llm';
import type { Logger } from '#logging';
import { FairSlots } from '#runtime';
import type { SessionLease, SessionStore } from '#sessions';
import type { ConfirmOutcome } from '../tools/tool.types.js';
import type { TurnRunner } from './turn-runner.js';
import type { TurnStateStore } from './turn-state.store.js';
import { StopReason, zeroUsage, type RunningTurn } from './turn.types.js';

export interface TurnCoordinatorOptions {
  readonly worker: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly deadlineMs: number;
  readonly confirmTimeoutMs: number;
  readonly maxConcurrentTurns: number;
  /**
   * Of those, how many one tenant may run at once (default: all); waiting turns are served round-robin across tenants.
   */
  readonly maxTenantTurns?: number;
  /**
   * On shutdown, how long running turns may go on to finish (new ones are refused meanwhile), asked when the shutdown
   * begins; what is still running then is stopped (its finished rounds written, its lease released). Default: at once.
   */
  readonly drainMs?: () => number;
}

interface LocalTurn {
  readonly controller: AbortController;
  readonly fence: SessionLease;
  /** When the lease was last known held (acquired or renewed): past `leaseMs` without a renew, it may be another's. */
  renewedAt: number;
  readonly confirmations: Map<string, (approve: boolean) => void>;
  readonly done: Promise<void>;
}

export interface StartTurn {
  readonly scope: Scope;
  readonly sessionId: string;
  readonly turnId: string;
  readonly message: string;
  readonly apiKey?: string;
}

/**
 * Runs turns on this worker: one per session at a time (the session lease, renewed while the turn runs,
 * released at its end, expiring if this worker dies), a bounded number at once, each with a deadline.
 * Cancels and confirmations reach the worker that runs the turn through the control topic (every instance
 * listens), with the turn-state store as the record the owner also polls.
 */
export class TurnCoordinator {
  private readonly turns = new Map<string, LocalTurn>();
  private draining = false;
  private readonly slots: FairSlots;
  private control?: TopicSubscription<TurnControl>;

  constructor(
    private readonly bus: Bus,
    private readonly sessions: SessionStore,
    private readonly turnState: TurnStateStore,
    private readonly llm: LlmClient,
    private readonly runner: TurnRunner,
    private readonly options: TurnCoordinatorOptions,
    private readonly logger: Logger,
  ) {
    this.slots = new FairSlots(
      options.maxConcurrentTurns,
      Math.min(options.maxConcurrentTurns, options.maxTenantTurns ?? options.maxConcurrentTurns),
    );
  }

  async listen(): Promise<void> {
    this.control = await this.bus.listen(TurnTopics.control);
    void (async () => {
      for await (const msg of this.control!) this.onControl(msg);
    })();
  }

  /** Takes the lease and starts the turn in the background; its events follow on the turn's topic. */
  async start(req: StartTurn): Promise<{ turn_id: string; worker: string }> {
    if (!this.llm.isConfigured) throw modelNotConfigured();
    if (this.draining)
      throw dependencyUnavailable('agent-runtime', `start a turn: worker ${this.options.worker} is shutting down`);
    // Taking the lease is also the check that the session exists (NOT_FOUND otherwise): no read of its messages here.
    const renewedAt = Date.now();
    const fence = await this.sessions.acquireLease(req.scope, req.sessionId, req.turnId, this.options.leaseMs);
    if (!fence) {
      const current = await this.turnState.current(req.scope, req.sessionId);
      throw new AlfredError(
        ErrorCode.Conflict,
        `a turn is already running on session ${req.sessionId}; wait for it or cancel it`,
        {
          session_id: req.sessionId,
          ...(current ? { turn_id: current.turn_id } : {}),
        },
      );
    }
    await this.turnState.setCurrent(
      req.scope,
      req.sessionId,
      { turn_id: req.turnId, worker: this.options.worker },
      this.options.leaseMs,
    );
    const controller = new AbortController();
    const local: LocalTurn = { controller, fence, renewedAt, confirmations: new Map(), done: Promise.resolve() };
    const done = this.execute(req, local);
    this.turns.set(req.turnId, Object.assign(local, { done }));
    return { turn_id: req.turnId, worker: this.options.worker };
  }

  /** Asks whichever worker runs the session's current turn to stop it. */
  async cancel(scope: Scope, sessionId: string): Promise<{ turn_id: string; cancelled: true; worker: string }> {
    const current = await this.turnState.current(scope, sessionId);
    if (!current)
      throw new AlfredError(ErrorCode.NotFound, `no turn is running on session ${sessionId}`, {
        session_id: sessionId,
      });
    await this.turnState.requestCancel(current.turn_id, this.options.deadlineMs);
    await this.bus.emit(TurnTopics.control, { kind: 'cancel', turn_id: current.turn_id });
    return { turn_id: current.turn_id, cancelled: true, worker: this.options.worker };
  }

  /** Records the answer once and tells the worker waiting for it. */
  async confirm(scope: Scope, sessionId: string, requestId: string, approve: boolean) {
    const outcome = await this.turnState.answer(scope, sessionId, requestId, approve);
    if (outcome === 'unknown')
      throw new AlfredError(ErrorCode.NotFound, `no confirmation ${requestId} is waiting on session ${sessionId}`);
    if (outcome === 'answered')
      throw new AlfredError(ErrorCode.Conflict, `confirmation ${requestId} was already answered`);
    if ('closed' in outcome) {
      throw new AlfredError(
        ErrorCode.Conflict,
        `confirmation ${requestId} is no longer open: ${closedWhy(outcome.closed)}`,
        { request_id: requestId, closed: outcome.closed },
      );
    }
    await this.bus.emit(TurnTopics.control, {
      kind: 'confirm',
      turn_id: outcome.turn_id,
      request_id: requestId,
      approve,
    });
    return { request_id: requestId, approve, turn_id: outcome.turn_id, worker: this.options.worker };
  }

  /**
   * Drains: refuses new turns, lets running ones finish within `drainMs`, then stops those still running (they write
   * their finished rounds and release their leases), then stops listening.
   */
  async shutdown(): Promise<void> {
    this.draining = true;
    const running = () => Promise.allSettled([...this.turns.values()].map((t) => t.done));
    const drainMs = this.options.drainMs?.() ?? 0;
    if (this.turns.size > 0 && drainMs > 0) {
      this.logger.info({ turns: this.turns.size, drainMs }, 'draining: letting running turns finish');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs)));
      await Promise.race([running(), late]);
      clearTimeout(timer);
    }
    for (const turn of this.turns.values()) turn.controller.abort(StopReason.Shutdown);
    await running();
    this.control?.close();
  }

  private onControl(msg: TurnControl): void {
    const turn = this.turns.get(msg.turn_id);
    if (!turn) return;
    if (msg.kind === 'cancel') turn.controller.abort(StopReason.Cancelled);
    else turn.confirmations.get(msg.request_id)?.(msg.approve);
  }

  private async execute(req: StartTurn, local: LocalTurn): Promise<void> {
    const emit = (event: TurnEvent) => {
      this.bus
        .emit(TurnTopics.events, event, { key: req.turnId })
        .catch((err: unknown) => this.logger.warn({ err: String(err), turn: req.turnId }, 'turn event lost'));
    };
    const { controller } = local;
    emit({
      type: 'started',
      turn_id: req.turnId,
      session_id: req.sessionId,
      worker: this.options.worker,
      heartbeat_ms: this.options.heartbeatMs,
    });
    const deadline = setTimeout(() => controller.abort(StopReason.Deadline), this.options.deadlineMs);
    const beat = setInterval(() => void this.heartbeat(req, local, emit), this.options.heartbeatMs);
    let outcome = { status: 'failed' as const, rounds: 0, usage: zeroUsage() } as Awaited<
      ReturnType<TurnRunner['run']>
    >;
    try {
      const release = await this.slots.acquire(req.scope.tenant, controller.signal);
      try {
        const turn: RunningTurn = {
          ...req,
          fence: local.fence,
          signal: controller.signal,
          emit,
          waitForConfirmation: (id) => this.waitForAnswer(req, local, id),
        };
        outcome = await this.runner.run(turn);
      } finally {
        release();
      }
    } catch (err) {
      if (controller.signal.aborted) {
        const reason = String(controller.signal.reason);
        outcome = { ...outcome, status: reason === StopReason.Cancelled ? 'cancelled' : 'failed' };
        emit({
          type: 'error',
          error: {
            code: reason === StopReason.Cancelled ? 'CANCELLED' : reason.toUpperCase(),
            message: `stopped before it ran: ${reason}`,
          },
        });
      } else if (isAlfredError(err)) {
        emit({ type: 'error', error: { code: err.code, message: err.message } });
      } else {
        emit({ type: 'error', error: { code: 'INTERNAL_ERROR', message: String(err) } });
        this.logger.error({ err, turn: req.turnId }, 'turn crashed');
      }
    } finally {
      clearTimeout(deadline);
      clearInterval(beat);
      this.turns.delete(req.turnId);
      await this.turnState.clearCurrent(req.scope, req.sessionId, req.turnId).catch(() => undefined);
      await this.sessions.releaseLease(req.scope, req.sessionId, req.turnId).catch(() => false);
      await this.revokeCredential(req);
      emit({ type: 'usage', usage: outcome.usage });
      emit({ type: 'done', turn_id: req.turnId, status: outcome.status, rounds: outcome.rounds });
    }
  }

  /**
   * Ends the turn's credential (the agent's bash key) at every end of the turn — finished, failed, cancelled, past its
   * deadline, stopped by a shutdown — through a gateway, which records it where every gateway checks. A revocation
   * that cannot be made (no gateway answers) is logged; the credential then lasts to its expiry.
   */
  private async revokeCredential(req: StartTurn): Promise<void> {
    if (!req.apiKey) return;
    try {
      const revocation = { scope: req.scope, credential: req.apiKey };
      await this.bus.request(CredentialRoutes.revoke, revocation, { timeoutMs: 2_000 });
    } catch (err) {
      const note = "could not revoke the turn's credential; it lasts until it expires";
      this.logger.warn({ err: String(err), turn: req.turnId }, note);
    }
  }

  /**
   * Keeps the lease and the current-turn record alive, tells the listener the turn lives, and picks up a cancel flag.
   * A renew refused, or failing until the lease may have lapsed, stops the turn: this worker no longer owns the
   * session (its writes carry the fence, so any that still come are refused once another worker took it).
   */
  private async heartbeat(req: StartTurn, local: LocalTurn, emit: (e: TurnEvent) => void): Promise<void> {
    const { controller } = local;
    if (controller.signal.aborted) return;
    emit({ type: 'heartbeat' });
    try {
      const attempt = Date.now();
      if (!(await this.sessions.renewLease(req.scope, req.sessionId, req.turnId, this.options.leaseMs))) {
        this.logger.warn({ turn: req.turnId, session: req.sessionId }, 'session lease lost: stopping the turn');
        controller.abort(StopReason.LeaseLost);
        return;
      }
      local.renewedAt = attempt;
      await this.turnState.setCurrent(
        req.scope,
        req.sessionId,
        { turn_id: req.turnId, worker: this.options.worker },
        this.options.leaseMs,
      );
      if (await this.turnState.cancelRequested(req.turnId)) controller.abort(StopReason.Cancelled);
    } catch (err) {
      const lapsed = Date.now() - local.renewedAt >= this.options.leaseMs;
      this.logger.warn(
        { err: String(err), turn: req.turnId, lapsed },
        lapsed ? 'session lease could not be renewed before it lapsed: stopping the turn' : 'turn heartbeat failed',
      );
      if (lapsed) controller.abort(StopReason.LeaseLost);
    }
  }

  private waitForAnswer(req: StartTurn, local: LocalTurn, requestId: string): Promise<ConfirmOutcome> {
    return new Promise((resolve) => {
      const finish = (outcome: ConfirmOutcome) => {
        clearTimeout(timer);
        clearInterval(poll);
        local.controller.signal.removeEventListener('abort', onAbort);
        local.confirmations.delete(requestId);
        resolve(outcome);
      };
      const answered = (approve: boolean) => finish(approve ? 'approved' : 'declined');
      // Unanswered, the request is closed in the shared state too, so a late answer is refused instead of acknowledged.
      const unanswered = (outcome: 'stopped' | 'timeout', why: string) => {
        finish(outcome);
        void this.turnState.closeConfirmation(req.scope, req.sessionId, requestId, why).catch(() => undefined);
      };
      const onAbort = () => unanswered('stopped', String(local.controller.signal.reason));
      const timer = setTimeout(() => unanswered('timeout', 'timeout'), this.options.confirmTimeoutMs);
      // The control topic is at-most-once: the stored answer is the record, polled in case a signal was missed.
      const poll = setInterval(
        () => {
          void this.turnState.answerOf(req.scope, req.sessionId, requestId).then(
            (a) => a !== undefined && answered(a),
            () => undefined,
          );
        },
        Math.min(1_000, this.options.heartbeatMs),
      );
      local.confirmations.set(requestId, answered);
      local.controller.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Why a confirmation stopped waiting, as the refusal of a late answer says it. */
function closedWhy(reason: string): string {
  if (reason === 'timeout') return 'nobody answered in time and the agent went on without it';
  if (reason === StopReason.Cancelled) return 'its turn was cancelled';
  return `its turn stopped (${reason})`;
}
