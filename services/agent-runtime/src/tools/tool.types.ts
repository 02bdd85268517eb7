import type { Scope, SkillSummary } from '#contracts';
import type { LlmTool } from '#llm';
import type { Workspace } from './workspace.js';

/** What a tool call gives the model back; an error result is shown to the model, the turn goes on. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
  /** Tools this call made available (skill_create / skill_update): offered at once, for the rest of the turn. */
  readonly offers?: readonly string[];
}

/** How a confirmation ended: the user's answer, no answer in time, or the turn stopped while waiting. */
export type ConfirmOutcome = 'approved' | 'declined' | 'timeout' | 'stopped';

/** What the model is told when a confirmation did not end in approval. */
export function notConfirmed(outcome: Exclude<ConfirmOutcome, 'approved'>, what: string): ToolOutcome {
  if (outcome === 'timeout')
    return failed(
      `Nobody answered the confirmation for ${what} in time, so it was not done. The user may be away: do ` +
        `not assume they declined; ask again later or continue without it.`,
    );
  if (outcome === 'stopped')
    return failed(`The turn stopped while waiting for confirmation of ${what}; nothing was done.`);
  return failed(`The user declined ${what}; nothing was done. Do not try it again unless the user asks.`);
}

export const ok = (content: string): ToolOutcome => ({ content, isError: false });
export const failed = (content: string): ToolOutcome => ({ content, isError: true });

/** Everything a tool may use during one turn. */
export interface ToolContext {
  readonly scope: Scope;
  readonly sessionId: string;
  /** The running turn: recorded as the writer of what its tools create (skills), with the session. */
  readonly turnId?: string;
  /**
   * The turn's scoped credential (tenant, agent, session; expires with the turn) minted by the gateway; bash exposes it
   * as ALFRED_API_KEY.
   */
  readonly apiKey?: string;
  readonly workspace: Workspace;
  readonly signal: AbortSignal;
  /** The level-1 index of this turn: names for load_skill's enum, folders for reading skill files. */
  readonly skills: readonly SkillSummary[];
  /** Skills this turn loaded with load_skill: the turn's end (completed or failed) is recorded as their outcome. */
  readonly loadedSkills?: Set<string>;
  /** Asks the user (confirmation_request) and waits for the answer, no answer in time, or the turn's end. */
  confirm(action: 'activate_skill' | 'tool_call', subject: string, prompt: string): Promise<ConfirmOutcome>;
  /** The active skill changed (its body joins the system prompt from the next model call). */
  activeSkillChanged(skill: string | null): Promise<void>;
}

/** A tool the turn loop can offer: its definition for the model and its implementation. */
export interface AgentTool {
  readonly definition: LlmTool;
  call(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}

/**
 * Extension point for tools beyond the core ones (e.g. executable skills, `skill_<id>`): a provider lists the
 * tools every turn offers, and may find more by name, offered only on demand (the tools an active skill declares,
 * a tool made in this turn). Registered with the runtime module; none by default.
 */
export interface ToolProvider {
  tools(ctx: Pick<ToolContext, 'scope' | 'sessionId'>): Promise<AgentTool[]>;
  /** The tools among `names` this provider has (fresh when `fresh`, e.g. right after one was made). */
  find?(names: readonly string[], ctx: Pick<ToolContext, 'scope'>, fresh?: boolean): Promise<AgentTool[]>;
}

/** Reads a string argument; undefined when absent, an error outcome's message when of the wrong type. */
export function stringArg(input: Record<string, unknown>, name: string, required = true): string | undefined {
  const v = input[name];
  if (v === undefined || v === null) {
    if (required) throw new ToolInputError(`missing required argument "${name}"`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ToolInputError(`argument "${name}" must be a string`);
  return v;
}

export function intArg(input: Record<string, unknown>, name: string, min: number): number | undefined {
  const v = input[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
    throw new ToolInputError(`argument "${name}" must be an integer ≥ ${min}`);
  return v;
}

/** Bad tool input: reported to the model as an error result. */
export class ToolInputError extends Error {}
