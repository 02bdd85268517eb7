import { DEFAULT_MAX_PAYLOAD_BYTES } from '#bus';
import type { RefusedSkill, SkillInstallResult, SkillProblem, SkillUpdateResult } from '#contracts';

/** What a reply may use of the bus's limit (the rest is the envelope and public-path rewriting). */
const BUDGET = Math.floor(DEFAULT_MAX_PAYLOAD_BYTES * 0.8);

/**
 * An install's answer always fits the bus: the work is done by the time it is sent, so an answer too large to carry
 * would hide what was installed. Problems and warnings are cut first (each refused skill keeps its first ones and
 * says how many more it had), which a collection of hundreds of broken skills needs; skill names are never cut.
 */
export function fitInstallReply(result: SkillInstallResult): SkillInstallResult {
  for (const keep of [20, 5, 1, 0]) {
    if (size(result) <= BUDGET) return result;
    result = {
      ...result,
      refused: result.refused.map((r) => cutProblems(r, keep)),
      installed: result.installed.map((s) => ({ ...s, warnings: s.warnings.slice(0, keep) })),
      warnings: result.warnings.slice(0, keep * 10),
    };
  }
  return result;
}

/** The same for updates: diffs are cut before problems. */
export function fitUpdateReply(result: SkillUpdateResult): SkillUpdateResult {
  for (const chars of [4000, 500, 0]) {
    if (size(result) <= BUDGET) return result;
    result = {
      sources: result.sources.map((s) => ({
        ...s,
        updated: s.updated.map((u) =>
          u.diff.length > chars ? { ...u, diff: u.diff.slice(0, chars), diff_truncated: true } : u,
        ),
        refused: s.refused.map((r) => cutProblems(r, chars === 0 ? 0 : 5)),
      })),
    };
  }
  return result;
}

function cutProblems(r: RefusedSkill, keep: number): RefusedSkill {
  if (r.problems.length <= keep) return r;
  const kept: SkillProblem[] = r.problems.slice(0, keep);
  return { ...r, problems: kept, more_problems: (r.more_problems ?? 0) + r.problems.length - kept.length };
}

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
