import { isAbsolute, relative, sep } from 'node:path';

/** True when `child` is `parent` or lies below it; both must be real (symlink-free) absolute paths. */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/** Settles a promise into a value or an error without relying on `instanceof Error` (errors may cross realms). */
export async function settle<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: NodeJS.ErrnoException }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error: error as NodeJS.ErrnoException };
  }
}
