import type { AgentStore } from '#agent-registry';

const record = (name: string, persona = '') => ({
  name,
  persona,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
});

/** The agent store's behaviour, run against every adapter. */
export function agentStoreContract(make: () => Promise<{ store: AgentStore; dispose(): Promise<void> }>): void {
  let fx: { store: AgentStore; dispose(): Promise<void> };
  beforeEach(async () => (fx = await make()));
  afterEach(() => fx.dispose());

  it('should create once and hand back the existing record to a second create', async () => {
    expect(await fx.store.create('t', record('jarvis', 'formal'))).toEqual({
      record: record('jarvis', 'formal'),
      created: true,
    });
    expect(await fx.store.create('t', record('jarvis', 'other'))).toEqual({
      record: record('jarvis', 'formal'),
      created: false,
    });
  });

  it('should let exactly one of concurrent creates of a name win', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => fx.store.create('t', record('race', `p${i}`))),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.record.persona)).size).toBe(1);
  });

  it('should keep tenants apart and list, update and delete', async () => {
    await fx.store.create('t', record('a'));
    await fx.store.create('u', record('b'));
    expect((await fx.store.list('t')).map((r) => r.name)).toEqual(['a']);
    expect(await fx.store.update('t', record('a', 'new'))).toBe(true);
    expect(await fx.store.update('t', record('missing'))).toBe(false);
    expect((await fx.store.get('t', 'a'))?.persona).toBe('new');
    expect(await fx.store.delete('t', 'a')).toBe(true);
    expect(await fx.store.delete('t', 'a')).toBe(false);
    expect(await fx.store.get('t', 'a')).toBeUndefined();
    expect(await fx.store.get('u', 'b')).toBeDefined();
  });
}
