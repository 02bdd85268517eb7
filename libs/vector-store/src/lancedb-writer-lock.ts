import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { ErrorCode } from '#contracts';
import { AlfredError } from '#errors';

/** How long a holder that stopped refreshing its lock (a killed process) keeps it, and how often holders refresh. */
const STALE_MS = 10_000;
const UPDATE_MS = 2_500;

/**
 * One writer per LanceDB table across processes. LanceDB serialises writes only inside one connection; two
 * processes on one folder each cache their own view, so reads in one miss the other's writes. The lock is a
 * directory refreshed by its holder (mtime), so it works across containers sharing a volume, where pids mean
 * nothing, and a crashed holder's lock goes stale after STALE_MS.
 */
export class LanceDbWriterLock {
  private constructor(private readonly release_: () => Promise<void>) {}

  /** Takes the lock of `table` in `dir`, waiting up to `waitMs` for a stale one to expire; refuses a live holder. */
  static async acquire(dir: string, table: string, waitMs: number): Promise<LanceDbWriterLock> {
    await mkdir(dir, { recursive: true });
    const target = join(dir, `${table}.writer`);
    const retries = Math.max(0, Math.ceil(waitMs / 500));
    try {
      const release = await lockfile.lock(target, {
        realpath: false,
        stale: STALE_MS,
        update: UPDATE_MS,
        retries: { retries, factor: 1, minTimeout: 500, maxTimeout: 500 },
        onCompromised: (err) => {
          // Another process may be writing now: going on would corrupt what both see. End loudly.
          throw new Error(`lost the LanceDB writer lock of ${table} in ${dir}: ${err.message}`);
        },
      });
      return new LanceDbWriterLock(release);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      throw new AlfredError(
        ErrorCode.Conflict,
        `the embedded vector store ${dir} (table ${table}) is in use by another process; one instance of a service may use ` +
          'an embedded LanceDB folder — run several instances on Qdrant (QDRANT_URL), or give each its own ALFRED_DATA_DIR',
        { dir, table },
        { cause: err },
      );
    }
  }

  async release(): Promise<void> {
    await this.release_().catch(() => undefined);
  }
}
