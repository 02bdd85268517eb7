import { MemoryKvStore } from '#kv';
import { IDEMPOTENCY_TTL_MS, KvIdempotencyStore } from './idempotency.store.js';

/** The embedded gateway's store (the process's memory): what a retry with the same key is told at each stage. */
describe(KvIdempotencyStore.name, () => {
  const timing = { budgetMs: 1_000, retryFirstMs: 10, leaseMs: 60_000, renewMs: 30_000 };
  const store = () =>
    new KvIdempotencyStore(new MemoryKvStore({ ttlMs: IDEMPOTENCY_TTL_MS }), () => true, undefined, timing);

  it('should run a key once: still running, then its answer replayed; another body is a mismatch', async () => {
    const s = store();
    expect(await s.reserve('k', 'body-a')).toEqual({ kind: 'new' });
    expect(await s.reserve('k', 'body-a')).toEqual({ kind: 'in-progress', retryAfterSeconds: 2 });
    expect(await s.reserve('k', 'body-b')).toEqual({ kind: 'mismatch' });
    await s.complete('k', { fingerprint: 'body-a', reservedAt: Date.now(), status: 201, body: { id: 'm1' } });
    expect(await s.reserve('k', 'body-a')).toEqual({ kind: 'replay', status: 201, body: { id: 'm1' } });
  });

  it('should let a retry run again once the request holding the key gave it up', async () => {
    const s = store();
    expect(await s.reserve('k', 'body')).toEqual({ kind: 'new' });
    await s.release('k');
    expect(await s.reserve('k', 'body')).toEqual({ kind: 'new' });
  });

  it('should let exactly one of concurrent reservations of a key run', async () => {
    const s = store();
    const results = await Promise.all(Array.from({ length: 10 }, () => s.reserve('race', 'body')));
    expect(results.filter((r) => r.kind === 'new')).toHaveLength(1);
  });
});
