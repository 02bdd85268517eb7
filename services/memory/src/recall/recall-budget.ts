import type { RecallHit } from '#contracts';

/**
 * Greedy fill by rank: take hits best first while they fit; a hit too large for what is left is skipped
 * (and marks the answer truncated) so smaller, lower-ranked hits can still use the room.
 */
export function fillBudget(ranked: readonly RecallHit[], budget: number, limit: number) {
  const results: RecallHit[] = [];
  let used = 0;
  let truncated = false;
  for (const hit of ranked) {
    if (results.length >= limit) break;
    if (used + hit.tokens > budget) {
      truncated = true;
      continue;
    }
    results.push(hit);
    used += hit.tokens;
  }
  return { results, used_tokens: used, truncated };
}
