import { isAbsolute, relative, sep } from 'node:path';

/** True when `child` is `parent` or lies below it; both must be real (symlink-free) absolute paths. */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}
