import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { FileKvStore } from '#files';
import { MemoryKvStore } from '#kv';
import { KvSessionStore } from './kv-session.store.js';
import { moveFileSessions } from './session.migration.js';
import { sessionStoreContract } from './session-store.contract.js';

sessionStoreContract(`${KvSessionStore.name} on files, leases in memory (embedded)`, describe, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-sessions-'));
  const leases = new MemoryKvStore();
  return {
    store: new KvSessionStore(new FileKvStore(dataDir), leases),
    peer: new KvSessionStore(new FileKvStore(dataDir), leases),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

sessionStoreContract(`${KvSessionStore.name} in memory`, describe, async () => {
  const store = new KvSessionStore(new MemoryKvStore());
  return { store, peer: store, cleanup: async () => undefined };
});

describe(`${KvSessionStore.name} on files`, () => {
  let dataDir: string;
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'alfred-sessions-'))));
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('should keep a session across a new store over the folder (a restart)', async () => {
    const scope = { tenant: 't/../x', agent: 'alfred' };
    const store = new KvSessionStore(new FileKvStore(dataDir));
    const { id } = await store.create(scope);
    await store.append(scope, id, [{ role: 'user', content: 'hi' }]);

    const reopened = new KvSessionStore(new FileKvStore(dataDir));
    expect((await reopened.get(scope, id)).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('should report a corrupt session record as an internal error', async () => {
    const scope = { tenant: 't', agent: 'alfred' };
    const store = new KvSessionStore(new FileKvStore(dataDir));
    const { id } = await store.create(scope);
    const kv = new FileKvStore(dataDir);
    const key = (await kv.keys('s.'))[0]!;
    await kv.put(key, '{"half":');

    await expect(store.get(scope, id)).rejects.toMatchObject({ code: ErrorCode.Internal });
  });

  it("should move an earlier version's session files into the bucket once and remove them", async () => {
    const scope = { tenant: 'acme.corp', agent: 'jarvis' };
    const old = join(dataDir, 'sessions', 'acme%2Ecorp', 'jarvis');
    const view = {
      id: 'old-1',
      agent: 'jarvis',
      version: 2,
      message_count: 1,
      active_skill: null,
      loaded_skills: [],
      metadata: {},
      tokens: null,
      first_message: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      messages: [{ role: 'user', content: 'kept' }],
    };
    const { mkdir } = await import('node:fs/promises');
    await mkdir(old, { recursive: true });
    await writeFile(join(old, 'old-1.json'), JSON.stringify(view));
    const kv = new FileKvStore(join(dataDir, 'kv', 'sessions'));

    expect(await moveFileSessions(dataDir, kv)).toBe(1);

    const store = new KvSessionStore(kv);
    expect(await store.get(scope, 'old-1')).toMatchObject({
      version: 2,
      messages: [{ role: 'user', content: 'kept' }],
      first_message: 'kept',
    });
    expect(await store.locate('acme.corp', 'old-1')).toBe('jarvis');
    expect(await readdir(dataDir)).toEqual(['kv']);
    expect(await moveFileSessions(dataDir, kv)).toBe(0);
  });
});
