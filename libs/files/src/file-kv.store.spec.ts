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
});
