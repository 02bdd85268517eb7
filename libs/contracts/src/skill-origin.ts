import { z } from 'zod';
import { IsoTimestamp } from './common.js';

/**
 * What an installed unit is: a SKILL.md skill, an executable skill (skill.json + execute.ts), or both in one folder.
 */
export const InstalledKind = z.enum(['skill', 'executable']);
export type InstalledKind = z.infer<typeof InstalledKind>;

/** Where an installed skill came from, pinned: shown as `installed_from` on reads. */
export const InstalledFrom = z.object({
  /** The source as it was given, canonical (no trailing slash); list and search filter on it. */
  source: z.string(),
  /** The branch or tag followed (the remote's default branch when none was given), or the commit it was pinned to. */
  ref: z.string(),
  /** The commit the installed files come from. */
  commit: z.string(),
  /** The skill's folder in the repository (`""` for its root). */
  path: z.string(),
  installed_at: IsoTimestamp,
  /** When an update last moved it (absent until then). */
  updated_at: IsoTimestamp.optional(),
  /** The folder the install searched (its `path` argument); an update of the source looks there for new skills. */
  root: z.string(),
  kinds: z.array(InstalledKind).min(1),
});
export type InstalledFrom = z.infer<typeof InstalledFrom>;
