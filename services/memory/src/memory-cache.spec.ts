import { MemoryCache } from './memory-cache.js';
import type { MemoryRecord } from './memory.repository.js';

const scope = { tenant: 't1', agent: 'alfred' };
const record = (id: string, content = `content of ${id}`): MemoryRecord => ({
  id,
  content,
  date: '2026-11-22',
  timestamp: '2026-11-22T00:00:00.000Z',
  importance: 0.5,
  tags: [],
  source: 'daily',
  version: 1,
});

describe(MemoryCache.name, () => {
  describe('fill', () => {
    it('should serve a filled record only to its own tenant and agent', () => {
      const cache = new MemoryCache();
      cache.fill(scope, record('m1'), cache.ticket());
      expect(cache.get(scope, 'm1')?.content).toBe('content of m1');
      expect(cache.get({ ...scope, agent: 'other' }, 'm1')).toBeUndefined();
      expect(cache.get({ ...scope, tenant: 't2' }, 'm1')).toBeUndefined();
    });

    it('should not cache a read that overlapped an eviction', () => {
      const cache = new MemoryCache();
      const ticket = cache.ticket();
      cache.evict(scope.tenant, scope.agent, 'm1');
      cache.fill(scope, record('m1', 'read before the write finished'), ticket);
      expect(cache.get(scope, 'm1')).toBeUndefined();
    });
  });

  describe('get', () => {
    it('should drop the least recently read record past capacity', () => {
      const cache = new MemoryCache({ capacity: 2 });
      cache.remember(scope, record('a'));
      cache.remember(scope, record('b'));
      cache.get(scope, 'a');
      cache.remember(scope, record('c'));
      expect([cache.get(scope, 'a')?.id, cache.get(scope, 'b')?.id, cache.get(scope, 'c')?.id]).toEqual([
        'a',
        undefined,
        'c',
      ]);
      expect(cache.size).toBe(2);
    });

    it('should miss once an entry is older than maxAgeMs', () => {
      let now = 1_000;
      const cache = new MemoryCache({ maxAgeMs: 100, now: () => now });
      cache.remember(scope, record('a'));
      now += 100;
      expect(cache.get(scope, 'a')?.id).toBe('a');
      now += 101;
      expect(cache.get(scope, 'a')).toBeUndefined();
      expect(cache.size).toBe(0);
    });

    it('should keep nothing with capacity 0', () => {
      const cache = new MemoryCache({ capacity: 0 });
      cache.remember(scope, record('a'));
      expect(cache.get(scope, 'a')).toBeUndefined();
    });
  });

  describe('evict', () => {
    it('should remove the record of that scope only', () => {
      const cache = new MemoryCache();
      const other = { ...scope, agent: 'other' };
      cache.remember(scope, record('a'));
      cache.remember(other, record('a'));
      cache.evict(scope.tenant, scope.agent, 'a');
      expect([cache.get(scope, 'a'), cache.get(other, 'a')?.id]).toEqual([undefined, 'a']);
    });
  });
});
