import { ErrorCode, type AgentPolicy, type NamePatterns } from '#contracts';
import { AlfredError } from '#errors';

const compiled = new Map<string, RegExp>();

/** Whether a name matches a policy pattern: `*` any run of characters, `?` exactly one, everything else literal. */
export function matchesPattern(pattern: string, name: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    re = new RegExp(`^${body}$`);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re.test(name);
}

/** Permitted: matches an allow pattern and no deny pattern (deny wins); absent patterns permit everything. */
export function permits(patterns: NamePatterns | undefined, name: string): boolean {
  if (!patterns) return true;
  return patterns.allow.some((p) => matchesPattern(p, name)) && !patterns.deny.some((p) => matchesPattern(p, name));
}

/**
 * What an agent's policy rules on: a `skill` (a SKILL.md name: loading, activating, reading it or its files, finding it
 * in the index or search) or a `tool` (every tool name a turn can call — read, write, edit, bash, load_skill, the
 * management tools, `skill_<id>` — and the same executable skill run over REST).
 */
export type PolicyKind = 'skill' | 'tool';

/**
 * The one policy decision: whether the agent may use `name`. Every path asks it — the REST API and MCP acting as the
 * agent, and the agent's own turn — so a name denied on one is denied on all. No policy permits everything.
 */
export function allows(policy: Partial<AgentPolicy> | undefined, kind: PolicyKind, name: string): boolean {
  return permits(kind === 'skill' ? policy?.skills : policy?.tools, name);
}

/** The refusal a path gives for what {@link allows} denies: FORBIDDEN, naming the agent, the kind and the name. */
export function policyRefusal(agent: string, kind: PolicyKind, name: string): AlfredError {
  return new AlfredError(ErrorCode.Forbidden, `agent ${agent}'s policy does not permit the ${kind} "${name}"`, {
    [kind]: name,
    agent,
    reason: 'policy',
  });
}

/** {@link allows}, or throws {@link policyRefusal}. */
export function enforcePolicy(
  policy: Partial<AgentPolicy> | undefined,
  agent: string,
  kind: PolicyKind,
  name: string,
): void {
  if (!allows(policy, kind, name)) throw policyRefusal(agent, kind, name);
}
