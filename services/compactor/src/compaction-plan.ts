import type { SessionMessage } from '#contracts';

/** The core tool an agent loads a skill with; its call and result (the skill body) survive compaction verbatim. */
export const SKILL_TOOL = 'load_skill';

/** How a session splits: what is summarised, what stays verbatim, and the recent tail. */
export interface CompactionPlan {
  /** Older messages folded into the summary. */
  readonly summarised: SessionMessage[];
  /** Older skill loads (tool_use + tool_result), kept verbatim in their order. */
  readonly skillMessages: SessionMessage[];
  /** The most recent messages, kept verbatim. */
  readonly recent: SessionMessage[];
}

const blocks = (m: SessionMessage) => (typeof m.content === 'string' ? [] : m.content);

/**
 * Indexes before which the messages may be cut: a cut never falls between a tool_use and its tool_result.
 * `allowed[i]` refers to the cut before message i (allowed[0] and allowed[n] are always true).
 */
export function allowedCuts(messages: readonly SessionMessage[]): boolean[] {
  const allowed = new Array<boolean>(messages.length + 1).fill(true);
  const usedAt = new Map<string, number>();
  messages.forEach((m, i) => {
    for (const b of blocks(m)) {
      if (b.type === 'tool_use') usedAt.set(b.id, i);
      if (b.type === 'tool_result') {
        const from = usedAt.get(b.tool_use_id);
        if (from !== undefined) for (let cut = from + 1; cut <= i; cut++) allowed[cut] = false;
      }
    }
  });
  return allowed;
}

/** Consecutive runs of messages that must stay together (a tool call with its results). */
export function segments(messages: readonly SessionMessage[]): SessionMessage[][] {
  const allowed = allowedCuts(messages);
  const out: SessionMessage[][] = [];
  messages.forEach((m, i) => {
    if (i === 0 || allowed[i]) out.push([m]);
    else out.at(-1)!.push(m);
  });
  return out;
}

const loadsSkill = (segment: readonly SessionMessage[]) =>
  segment.some((m) => blocks(m).some((b) => b.type === 'tool_use' && b.name === SKILL_TOOL));

/**
 * Token-bounded: keeps the longest recent tail (whole segments) within `tailTokens` and summarises the rest, skill
 * loads included (they are re-read on demand), so a few huge messages cannot make compaction a no-op.
 */
export function planByTokens(
  messages: readonly SessionMessage[],
  tailTokens: number,
  tokensOf: (m: SessionMessage[]) => number,
): CompactionPlan | null {
  const all = segments(messages);
  let kept = 0;
  let used = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    const size = tokensOf(all[i]!);
    if (used + size > tailTokens) break;
    used += size;
    kept++;
  }
  if (kept === all.length) return null;
  const summarised = all.slice(0, all.length - kept).flat();
  if (summarised.length === 0) return null;
  return { summarised, skillMessages: [], recent: all.slice(all.length - kept).flat() };
}

/**
 * Keeps the last `preserveRecent` messages (moved earlier when the cut would split a tool call from its
 * result) and skill loads verbatim; everything older is summarised. Nothing to summarise: null.
 */
export function planCompaction(messages: readonly SessionMessage[], preserveRecent: number): CompactionPlan | null {
  const allowed = allowedCuts(messages);
  let cut = Math.max(0, messages.length - preserveRecent);
  while (cut > 0 && !allowed[cut]) cut--;
  if (cut === 0) return null;
  const summarised: SessionMessage[] = [];
  const skillMessages: SessionMessage[] = [];
  for (const segment of segments(messages.slice(0, cut)))
    (loadsSkill(segment) ? skillMessages : summarised).push(...segment);
  if (summarised.length === 0) return null;
  return { summarised, skillMessages, recent: messages.slice(cut) };
}
