import type { Scope, TurnEvent, TurnStatus, TurnUsage } from '#contracts';
import type { SessionLease } from '#sessions';
import type { ConfirmOutcome } from '../tools/tool.types.js';

/** Why a running turn stopped early. */
export const StopReason = {
  Cancelled: 'cancelled',
  Deadline: 'deadline',
  Shutdown: 'shutdown',
  LeaseLost: 'lease-lost',
} as const;
export type StopReason = (typeof StopReason)[keyof typeof StopReason];

/** One turn as the runner sees it: who, what, how to report, how it is stopped, how confirmations arrive. */
export interface RunningTurn {
  readonly scope: Scope;
  readonly sessionId: string;
  readonly turnId: string;
  readonly message: string;
  /** The caller's API key (keys required), for the API calls of skills run through bash. */
  readonly apiKey?: string;
  readonly signal: AbortSignal;
  /**
   * The session lease this turn holds: every write of the turn to its session carries it, so a lapsed holder's is
   * refused.
   */
  readonly fence: SessionLease;
  emit(event: TurnEvent): void;
  /** Resolves with the user's answer, `timeout` when none came in time, `stopped` when the turn stopped first. */
  waitForConfirmation(requestId: string): Promise<ConfirmOutcome>;
}

export interface TurnOutcome {
  readonly status: TurnStatus;
  readonly rounds: number;
  readonly usage: TurnUsage;
}

export const zeroUsage = (): TurnUsage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  model_calls: 0,
});

export function stopReasonOf(signal: AbortSignal): StopReason {
  return (typeof signal.reason === 'string' ? signal.reason : StopReason.Cancelled) as StopReason;
}
