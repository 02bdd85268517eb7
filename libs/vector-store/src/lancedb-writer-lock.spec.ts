import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlfredError } from '#errors';
import { LanceDbStore } from './lancedb.store.js';

const spec = { name: 'memories', embedderId: 'test-v1-4', dimension: 4, fields: {} } as const;

describe('LanceDbStore writer lock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'alfred-lancedb-lock-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('should refuse a second store on a table another store holds, and hand it over after close', async () => {
    const first = new LanceDbStore({ dir });
    const second = new LanceDbStore({ dir, lockWaitMs: 0 });
    await first.open(spec);
    const refused = await second.open(spec).catch((e: unknown) => e);
    expect(isAlfredError(refused) && refused.code).toBe('CONFLICT');
    expect((refused as Error).message).toMatch(/in use by another process.*QDRANT_URL/);
    await first.close();
    await expect(second.open(spec)).resolves.toBeDefined();
    await second.close();
  });

  it('should let stores share a folder when they hold different tables (embedded memory and skill-registry)', async () => {
    const a = new LanceDbStore({ dir, lockWaitMs: 0 });
    const b = new LanceDbStore({ dir, lockWaitMs: 0 });
    await a.open(spec);
    await expect(b.open({ ...spec, name: 'skills' })).resolves.toBeDefined();
    await Promise.all([a.close(), b.close()]);
  });

  it('should refuse a table held by another process', async () => {
    // A real second process holds the lock the way a second memory instance would.
    const lockfile = join(process.cwd(), 'node_modules', 'proper-lockfile', 'index.js');
    const holder = spawn(process.execPath, ['-e', `require(${JSON.stringify(lockfile)}).lock(${JSON.stringify(join(dir, 'memories.writer'))}, { realpath: false, update: 1000 }).then(() => { console.log('held'); setInterval(() => {}, 1000); })`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    try {
      const store = new LanceDbStore({ dir, lockWaitMs: 1_000 });
      await expect(store.open(spec)).rejects.toThrow(/in use by another process/);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
