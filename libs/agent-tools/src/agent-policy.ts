import type { NamePatterns } from '#contracts';

const compiled = new Map<string, RegExp>();

/** Whether a name matches a policy pattern: `*` any run of characters, `?` exactly one, everything else literal. */
export function matchesPattern(pattern: string, name: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
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
