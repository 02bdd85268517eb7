import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CachedKvStore, type KvStore } from '#kv';
import { kvStoreContract } from '#testing';
import { FileKvStore } from './file-kv.store.js';

/** Counts the reads that reach the files. */
function countingGets(inner: FileKvStore): FileKvStore & { gets: number } {
  const counting = Object.create(inner) as FileKvStore & { gets: number };
  counting.gets = 0;
  counting.get = (key: string) => {
    counting.gets++;
    return inner.get(key);
  };
  return counting;
}

// Two cached instances over one folder: what the embedded gateway (reading) and agent-runtime (writing) are.
kvStoreContract(
  `${CachedKvStore.name} over ${FileKvStore.name}`,
  describe,
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'alfred-cached-kv-'));
    const store = await CachedKvStore.open(new FileKvStore(dir));
    const peer = await CachedKvStore.open(new FileKvStore(dir));
    return {
      store,
      peer,
      cleanup: async () => {
        await Promise.all([store.close(), peer.close()]);
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  { ttl: false },
);

describe(`${CachedKvStore.name} over ${FileKvStore.name}`, () => {
  let dir: string;
  const closing: KvStore[] = [];
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'alfred-cached-kv-'))));
  afterEach(async () => {
    for (const s of closing.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('should read the files once per key (absent ones too) until a write through any instance changes it', async () => {
    const files = countingGets(new FileKvStore(dir));
    const cached = await CachedKvStore.open(files);
    const writer = new FileKvStore(dir);
    closing.push(cached);
    await writer.put('t.a', 'one');

    expect((await cached.get('t.a'))?.value).toBe('one');
    expect(await cached.get('t.missing')).toBeUndefined();
    expect((await cached.get('t.a'))?.value).toBe('one');
    expect(await cached.get('t.missing')).toBeUndefined();
    expect(files.gets).toBe(2);

    await writer.put('t.a', 'two');
    await writer.put('t.missing', 'now here');
    expect((await cached.get('t.a'))?.value).toBe('two');
    expect((await cached.get('t.missing'))?.value).toBe('now here');
    await writer.delete('t.a');
    expect(await cached.get('t.a')).toBeUndefined();
    expect(files.gets).toBe(5);
  });

  it('should not keep a read that a write overtook', async () => {
    const writer = new FileKvStore(dir);
    await writer.put('t.a', 'old');
    const files = new FileKvStore(dir);
    let overtake = true;
    const slow = Object.create(files) as FileKvStore;
    // The first read finds the old value and returns it only once a write has landed (and been told) after it.
    slow.get = async (key: string) => {
      const found = await files.get(key);
      if (overtake) await writer.put('t.a', 'new');
      overtake = false;
      return found;
    };
    const cached = await CachedKvStore.open(slow);
    closing.push(cached);

    expect((await cached.get('t.a'))?.value).toBe('old');

    expect((await cached.get('t.a'))?.value).toBe('new');
  });

  it('should hold at most its capacity of keys, dropping the least recently read', async () => {
    const files = countingGets(new FileKvStore(dir));
    const cached = await CachedKvStore.open(files, { capacity: 2 });
    closing.push(cached);

    for (const key of ['k.1', 'k.2', 'k.1', 'k.3', 'k.1', 'k.2']) await cached.get(key);

    // k.1, k.2, (k.1 hit), k.3 drops k.2, (k.1 hit), k.2 read again.
    expect(files.gets).toBe(4);
  });
});
