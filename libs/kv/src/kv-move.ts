import { isKvConflict, type KvStore } from './kv-store.js';

/**
 * Stores the value unless the key holds one: data moved from an earlier layout never overwrites what was written since.
 */
export async function putIfAbsent(kv: KvStore, key: string, value: string): Promise<void> {
  await kv
    .put(key, value, { expected: 0 })
    .catch((err: unknown) => (isKvConflict(err) ? undefined : Promise.reject(err)));
}

/** Where a move of an earlier version's data reports (a pino logger fits). */
export interface MoveLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Runs a move of what an earlier version kept in its own layout into the port's: one that fails (a server away at
 * start) leaves that data where it was, to be moved by the next start, and the service starts anyway.
 */
export async function moveEarlierData(
  log: MoveLog | undefined,
  what: string,
  move: () => Promise<number>,
): Promise<void> {
  try {
    const count = await move();
    if (count > 0) log?.info({ moved: count }, `${what} moved into the key-value layout`);
  } catch (err) {
    log?.warn(
      { err: String(err) },
      `${what} kept by an earlier version could not be moved yet; the next start tries again`,
    );
  }
}
