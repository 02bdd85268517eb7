import { basename, dirname, sep } from 'node:path';
import { AlfredError, isAlfredError } from '#errors';
import type { SkillRoot } from '#skills';

/** Where every skill root appears to callers: `/skills/<label>/…`, never the server's own folders. */
export const PUBLIC_SKILLS_PREFIX = '/skills';

/**
 * The one place server paths leave the registry: every reply and error a caller sees is rewritten so that a skill
 * root shows as `/skills/<source>` (`/skills/tenant` for the calling tenant's own skills). Callers keep everything
 * paths are used for — telling skills and roots apart, and reading a skill's files with the agent's `read` tool by
 * the location the index gives (the runtime maps those reads to the registry) — without learning how the server's
 * disk is laid out.
 */
export class PublicPaths {
  /** Longest real prefix first, so a root inside another root is named by the inner one. */
  private readonly pairs: ReadonlyArray<readonly [real: string, shown: string]>;

  constructor(roots: ReadonlyArray<{ readonly dir: string; readonly label: string }>) {
    this.pairs = roots
      .map(({ dir, label }) => [dir.replace(/[\\/]+$/, ''), `${PUBLIC_SKILLS_PREFIX}/${label}`] as const)
      .sort((a, b) => b[0].length - a[0].length);
  }

  /**
   * The shared roots labelled by source and, for the conventional `<dir>/.<tool>/skills` roots, that tool folder
   * (`/skills/project/.claude`); any other collision is numbered (`extra-2`). Plus the tenant's own folder.
   */
  static of(sharedRoots: readonly SkillRoot[], tenantDir?: string): PublicPaths {
    const seen = new Map<string, number>();
    const labelled = sharedRoots.map((root) => {
      const parent = basename(dirname(root.dir));
      const base = basename(root.dir) === 'skills' && parent.startsWith('.') ? `${root.source}/${parent}` : root.source;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      return { dir: root.dir, label: n === 1 ? base : `${base}-${n}` };
    });
    return new PublicPaths(tenantDir ? [{ dir: tenantDir, label: 'tenant' }, ...labelled] : labelled);
  }

  /** A text with every server path of a root replaced by its public form. */
  text(value: string): string {
    let out = value;
    for (const [real, shown] of this.pairs) {
      if (out === real) return shown;
      if (out.includes(real + sep)) out = out.split(real + sep).join(`${shown}/`);
      if (out.endsWith(real)) out = out.slice(0, -real.length) + shown;
    }
    return out;
  }

  /** A reply (any JSON value) with every string rewritten. */
  value<T>(value: T): T {
    if (typeof value === 'string') return this.text(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.value(v)) as T;
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.value(v)])) as T;
    }
    return value;
  }

  /** Runs `work` and rewrites its reply, or the message and details of the error it throws. */
  async expose<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return this.value(await work());
    } catch (err) {
      if (!isAlfredError(err)) throw err;
      throw new AlfredError(err.code, this.text(err.message), this.value(err.details), { cause: err });
    }
  }
}
