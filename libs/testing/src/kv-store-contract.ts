import { kvKey, KvConflictError, KvKeyError, type KvBucketOptions, type KvChange, type KvStore } from '#kv';

export interface KvBucketFixture {
  readonly store: KvStore;
  /** A second instance over the same bucket (another process's view; the same instance where there is only one). */
  readonly peer: KvStore;
  cleanup(): Promise<void>;
}

/** Conditions are waited on, never slept for. */
async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Adds one to a JSON counter by compare-and-set, retrying a lost race: what every dataset's change looks like. */
async function increment(store: KvStore, key: string): Promise<void> {
  for (;;) {
    const entry = await store.get(key);
    const next = String(Number(entry?.value ?? '0') + 1);
    try {
      await store.put(key, next, { expected: entry?.revision ?? 0 });
      return;
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err;
    }
  }
}

/** What every key-value adapter must do; each adapter's spec runs it against a real bucket. */
export function kvStoreContract(
  name: string,
  describeFn: jest.Describe,
  bucket: (options: KvBucketOptions) => Promise<KvBucketFixture>,
  /** `ttl: false` for a store that is documented not to serve buckets with a TTL. */
  features: { readonly ttl?: boolean } = {},
): void {
  describeFn(`${name} (key-value contract)`, () => {
    let fx: KvBucketFixture;
    beforeEach(async () => (fx = await bucket({})));
    afterEach(() => fx.cleanup());

    it('should keep a value, show it to another instance and move its revision with every write', async () => {
      expect(await fx.store.get('a.b')).toBeUndefined();
      const first = await fx.store.put('a.b', '{"n":1}');
      expect(await fx.peer.get('a.b')).toEqual({ key: 'a.b', value: '{"n":1}', revision: first });
      const second = await fx.peer.put('a.b', 'two');
      expect(second).toBeGreaterThan(first);
      expect(await fx.store.get('a.b')).toEqual({ key: 'a.b', value: 'two', revision: second });
    });

    it('should write on compare-and-set only at the expected revision, and change nothing otherwise', async () => {
      const created = await fx.store.put('cas', 'v1', { expected: 0 });
      await expect(fx.peer.put('cas', 'again', { expected: 0 })).rejects.toBeInstanceOf(KvConflictError);
      const moved = await fx.peer.put('cas', 'v2', { expected: created });
      await expect(fx.store.put('cas', 'stale', { expected: created })).rejects.toBeInstanceOf(KvConflictError);
      expect(await fx.store.get('cas')).toEqual({ key: 'cas', value: 'v2', revision: moved });
      await expect(fx.store.put('absent', 'x', { expected: moved })).rejects.toBeInstanceOf(KvConflictError);
      expect(await fx.store.get('absent')).toBeUndefined();
    });

    it('should delete (on compare-and-set too) and never hand a deleted revision out again', async () => {
      const old = await fx.store.put('gone', 'v');
      await expect(fx.peer.delete('gone', { expected: old + 1 })).rejects.toBeInstanceOf(KvConflictError);
      expect((await fx.store.get('gone'))?.value).toBe('v');
      expect(await fx.peer.delete('gone', { expected: old })).toBe(true);
      expect(await fx.store.get('gone')).toBeUndefined();
      expect(await fx.store.delete('gone')).toBe(false);
      const again = await fx.store.put('gone', 'new', { expected: 0 });
      expect(again).toBeGreaterThan(old);
      await expect(fx.peer.put('gone', 'stale', { expected: old })).rejects.toBeInstanceOf(KvConflictError);
      expect((await fx.store.get('gone'))?.value).toBe('new');
    });

    it('should lose no change when instances compare-and-set one key at once', async () => {
      await Promise.all(Array.from({ length: 24 }, (_, i) => increment(i % 2 ? fx.store : fx.peer, 'count')));
      expect((await fx.store.get('count'))?.value).toBe('24');
    });

    it('should list keys and entries by whole-token prefix, in key order', async () => {
      for (const key of ['t.b.2', 't.a', 't.b.1', 'tt.x', 'u']) await fx.store.put(key, key.toUpperCase());
      expect(await fx.peer.keys('t.')).toEqual(['t.a', 't.b.1', 't.b.2']);
      expect(await fx.peer.keys('t.b.')).toEqual(['t.b.1', 't.b.2']);
      expect(await fx.peer.list('t.b.')).toEqual([
        { key: 't.b.1', value: 'T.B.1', revision: expect.any(Number) },
        { key: 't.b.2', value: 'T.B.2', revision: expect.any(Number) },
      ]);
      await fx.store.delete('t.b.1');
      expect(await fx.peer.keys('t.')).toEqual(['t.a', 't.b.2']);
      expect(await fx.peer.keys('')).toEqual(['t.a', 't.b.2', 'tt.x', 'u']);
      expect(await fx.peer.keys('nothing.')).toEqual([]);
    });

    it('should take keys made of any string, and refuse keys outside its alphabet with nothing written', async () => {
      const key = kvKey('tenant.with dots/and ü', '', 'agent');
      await fx.store.put(key, 'ok');
      expect((await fx.peer.get(key))?.value).toBe('ok');
      for (const bad of ['', 'a..b', '.a', 'a.', 'a b', 'a*', 'a>', 'ä']) {
        await expect(fx.store.put(bad, 'x')).rejects.toBeInstanceOf(KvKeyError);
        await expect(fx.store.get(bad)).rejects.toBeInstanceOf(KvKeyError);
      }
      await expect(fx.store.keys('a')).rejects.toBeInstanceOf(KvKeyError);
    });

    it('should tell a watch of every change under its prefix, from any instance, until it stops', async () => {
      const seen: KvChange[] = [];
      const watch = await fx.store.watch('w.', (change) => seen.push(change));
      try {
        const revision = await fx.peer.put('w.one', '1');
        await fx.peer.put('other', 'x');
        await eventually(() => seen.length >= 1, 'the put to be seen');
        expect(seen[0]).toEqual({ key: 'w.one', entry: { key: 'w.one', value: '1', revision } });
        await fx.peer.delete('w.one');
        await eventually(() => seen.length >= 2, 'the delete to be seen');
        expect(seen[1]).toEqual({ key: 'w.one', entry: undefined });
      } finally {
        await watch.stop();
      }
      await fx.peer.put('w.two', '2');
      // A change after stop is never delivered: write a key the stopped watch would have seen, then one a fresh
      // watch sees, and check the stopped one stayed quiet meanwhile.
      const late: KvChange[] = [];
      const fresh = await fx.store.watch('w.', (change) => late.push(change));
      await fx.peer.put('w.three', '3');
      await eventually(() => late.some((c) => c.key === 'w.three'), 'the fresh watch');
      await fresh.stop();
      expect(seen).toHaveLength(2);
    });

    (features.ttl === false ? it.skip : it)('should forget entries the bucket TTL has passed for', async () => {
      const short = await bucket({ ttlMs: 1_000 });
      try {
        await short.store.put('ttl.k', 'v');
        expect((await short.peer.get('ttl.k'))?.value).toBe('v');
        await eventually(async () => (await short.peer.get('ttl.k')) === undefined, 'the entry to expire', 15_000);
        expect(await short.store.keys('ttl.')).toEqual([]);
      } finally {
        await short.cleanup();
      }
    });
  });
}
