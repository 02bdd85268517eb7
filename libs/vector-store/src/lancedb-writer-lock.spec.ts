import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LanceDbStore } from './lancedb.store.js';
import { LanceDbWriterLock } from './lancedb-writer-lock.js';

const lockfile = join(process.cwd(), 'node_modules', 'proper-lockfile', 'index.js');

/** Whether another process can take the table's lock now ('locked', released at once) or finds it held ('ELOCKED'). */
function otherProcessLocks(dir: string): Promise<string> {
  const script =
    `require(${JSON.stringify(lockfile)}).lock(${JSON.stringify(join(dir, 'memories.writer'))}, { realpath: false })` +
    `.then((release) => release().then(() => console.log('locked')), (e) => console.log(e.code))`;
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', () => resolve(out.trim()));
  });
}

const spec = { name: 'memories', embedderId: 'test-v1-4', dimension: 4, fields: {} } as const;

describe('LanceDbStore writer lock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-lancedb-lock-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('should share a table between stores of one process, freeing it for others when the last closes', async () => {
    const first = new LanceDbStore({ dir });
    const second = new LanceDbStore({ dir, lockWaitMs: 0 });
    await first.open(spec);
    await expect(second.open(spec)).resolves.toBeDefined();
    await first.close();
    await expect(otherProcessLocks(dir)).resolves.toBe('ELOCKED');
    await second.close();
    await expect(otherProcessLocks(dir)).resolves.toBe('locked');
  });

  it('should release the lock of a table it refused to open (an embedder mismatch)', async () => {
    const first = new LanceDbStore({ dir });
    await first.open(spec);
    await first.close();
    const mismatched = new LanceDbStore({ dir, lockWaitMs: 0 });
    await expect(mismatched.open({ ...spec, embedderId: 'other-v1-4' })).rejects.toMatchObject({
      code: 'EMBEDDER_MISMATCH',
    });
    await expect(otherProcessLocks(dir)).resolves.toBe('locked');
    await mismatched.close();
  });

  it('should let stores share a folder when they hold different tables (embedded memory, skill-registry)', async () => {
    const a = new LanceDbStore({ dir, lockWaitMs: 0 });
    const b = new LanceDbStore({ dir, lockWaitMs: 0 });
    await a.open(spec);
    await expect(b.open({ ...spec, name: 'skills' })).resolves.toBeDefined();
    await Promise.all([a.close(), b.close()]);
  });

  it('should refuse a table held by another process', async () => {
    // A real second process holds the lock the way a second memory instance would.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(lockfile)}).lock(${JSON.stringify(join(dir, 'memories.writer'))}, { ` +
          `realpath: false, update: 1000 }).then(() => { console.log('held'); setInterval(() => {}, 1000); })`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    try {
      const store = new LanceDbStore({ dir, lockWaitMs: 1_000 });
      await expect(store.open(spec)).rejects.toThrow(/in use by another process/);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('should let a held lock go quietly when its whole folder is removed (nothing left to protect)', async () => {
    const compromised: unknown[] = [];
    const onError = (err: unknown) => compromised.push(err);
    process.on('uncaughtException', onError);
    try {
      // The lock's refresh timer is faked; its file I/O runs as it does.
      jest.useFakeTimers({ doNotFake: ['Date', 'nextTick', 'setImmediate', 'queueMicrotask', 'hrtime'] });
      const lock = await LanceDbWriterLock.acquire(dir, 'memories', 0);
      await rm(dir, { recursive: true, force: true });
      // Past proper-lockfile's next refresh (every 2.5 s), which finds the lock file gone.
      await jest.advanceTimersByTimeAsync(3_000);
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      for (let turns = 0; !lock.folderGone && turns < 10_000; turns++) await turn();
      expect(lock.folderGone).toBe(true);
      expect(compromised).toEqual([]);
      await lock.release();
    } finally {
      jest.useRealTimers();
      process.off('uncaughtException', onError);
    }
  });
});
