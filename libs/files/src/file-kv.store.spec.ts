import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kvStoreContract } from '#testing';
import { FileKvStore } from './file-kv.store.js';

kvStoreContract(FileKvStore.name, describe, async (options) => {
  const dir = await mkdtemp(join(tmpdir(), 'alfred-file-kv-'));
  return {
    store: new FileKvStore(dir, options),
    peer: new FileKvStore(dir, options),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe(FileKvStore.name, () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'alfred-file-kv-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('should keep values and revisions across a new instance (a restart), and never reuse a revision', async () => {
    const before = new FileKvStore(dir);
    const first = await before.put('s.a/b=', 'v1');
    const after = new FileKvStore(dir);
    expect(await after.get('s.a/b=')).toEqual({ key: 's.a/b=', value: 'v1', revision: first });
    await after.delete('s.a/b=');
    expect(await after.put('s.a/b=', 'v2', { expected: 0 })).toBeGreaterThan(first);
    expect(await readdir(join(dir, 's'))).toEqual(['a%2Fb=.json']);
  });

  it('should ignore what a write cut short by a crash left behind (its temp file)', async () => {
    const store = new FileKvStore(dir);
    await store.put('k.one', 'kept');
    await writeFile(join(dir, 'k', '.0b1c.tmp'), '{"r":9,"v":"half');
    expect(await store.list('k.')).toEqual([{ key: 'k.one', value: 'kept', revision: expect.any(Number) }]);
  });

  it("should leave no folder emptied by a delete behind, and lose no write racing its folder's removal", async () => {
    const store = new FileKvStore(dir);
    await store.put('t.a.1', 'x');
    await store.put('t.b.1', 'y');
    await store.delete('t.a.1');
    expect(await readdir(join(dir, 't'))).toEqual(['b']);

    // Writers of new keys in a folder while its last key is deleted, over and over.
    for (let round = 0; round < 20; round++) {
      await store.put('r.f.gone', 'x');
      await Promise.all([store.delete('r.f.gone'), store.put(`r.f.k${round}`, 'kept')]);
      await store.delete(`r.f.k${round}`);
    }
    expect(await store.keys('r.')).toEqual([]);
    expect(await readdir(dir)).toEqual(['t']);
  });
});
