import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

/** How long a holder that stopped refreshing its lock (a killed process) keeps it, and how often holders refresh. */
const STALE_MS = 10_000;
const UPDATE_MS = 2_500;

/**
 * One writing process per LanceDB table. LanceDB serialises writes only inside one connection; two
 * processes on one folder each cache their own view, so reads in one miss the other's writes. The lock is a
 * directory refreshed by its holder (mtime), so it works across containers sharing a volume, where pids mean
 * nothing, and a crashed holder's lock goes stale after STALE_MS.
 */
/**
 * Locks this process holds, by lock path: stores of one process share them (the lock guards against other processes).
 */
const held = new Map<string, HeldLock>();

interface HeldLock {
  readonly release: Promise<() => Promise<void>>;
  users: number;
  /** The table's folder was removed under the lock: nothing is left to protect, so the lock is let go quietly. */
  folderGone: boolean;
}

export class LanceDbWriterLock {
  private released = false;

  private constructor(private readonly target: string) {}

  /** Takes the lock of `table` in `dir`, waiting up to `waitMs` for a stale one to expire; refuses a live holder. */
  static async acquire(dir: string, table: string, waitMs: number): Promise<LanceDbWriterLock> {
    const target = join(dir, `${table}.writer`);
    const mine = held.get(target);
    if (mine) {
      mine.users++;
      return new LanceDbWriterLock(target);
    }
    const gone = () => void (entry.folderGone = true);
    const entry: HeldLock = { release: take(dir, table, target, waitMs, gone), users: 1, folderGone: false };
    held.set(target, entry);
    try {
      await entry.release;
    } catch (err) {
      held.delete(target);
      throw err;
    }
    return new LanceDbWriterLock(target);
  }

  /** Whether the table's folder was removed while this process held the lock (it was let go, quietly). */
  get folderGone(): boolean {
    return held.get(this.target)?.folderGone ?? false;
  }

  async release(): Promise<void> {
    const entry = held.get(this.target);
    if (this.released || !entry) return;
    this.released = true;
    if (--entry.users > 0) return;
    held.delete(this.target);
    await (await entry.release)().catch(() => undefined);
  }
}

async function take(
  dir: string,
  table: string,
  target: string,
  waitMs: number,
  onFolderGone: () => void,
): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const retries = Math.max(0, Math.ceil(waitMs / 500));
  try {
    return await lockfile.lock(target, {
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      retries: { retries, factor: 1, minTimeout: 500, maxTimeout: 500 },
      onCompromised: (err) => {
        // The folder itself was removed: there is nothing left to protect. (proper-lockfile reports a vanished lock
        // file as ECOMPROMISED, so the folder is looked at rather than the error's code.)
        if (!existsSync(dir)) return onFolderGone();
        // Another process may be writing now: going on would corrupt what both see. End loudly.
        throw new Error(`lost the LanceDB writer lock of ${table} in ${dir}: ${err.message}`);
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    throw new AlfredError(
      ErrorCode.Conflict,
      `the embedded vector store ${dir} (table ${table}) is in use by another process; one instance of a ` +
        'service may use an embedded LanceDB folder — run several instances on Qdrant (QDRANT_URL), or give ' +
        'each its own ALFRED_DATA_DIR',
      { dir, table },
      { cause: err },
    );
  }
}
