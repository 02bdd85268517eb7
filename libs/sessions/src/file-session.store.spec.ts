import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '#contracts';
import { FileSessionStore } from './file-session.store.js';
import { sessionStoreContract } from './session-store.contract.js';

sessionStoreContract(FileSessionStore.name, describe, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-sessions-'));
  return {
    store: new FileSessionStore({ dataDir }),
    peer: new FileSessionStore({ dataDir }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describe(FileSessionStore.name, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'alfred-sessions-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  describe('deleteAll', () => {
    it('should leave no folder of the agent behind', async () => {
      const store = new FileSessionStore({ dataDir });
      const jarvis = { tenant: 't', agent: 'jarvis' };
      await store.create(jarvis);
      await store.create({ tenant: 't', agent: 'alfred' });

      expect(await store.deleteAll(jarvis)).toBe(1);
      expect(await readdir(join(dataDir, 'sessions', 't'))).toEqual(['alfred']);
    });
  });

  describe('append', () => {
    it('should persist one JSON file per session and leave no temp files', async () => {
      const store = new FileSessionStore({ dataDir });
      const { id } = await store.create({ tenant: 't/../x', agent: 'alfred' });
      await store.append({ tenant: 't/../x', agent: 'alfred' }, id, [{ role: 'user', content: 'hi' }]);

      const dir = join(dataDir, 'sessions', 't%2F%2E%2E%2Fx', 'alfred');
      expect(await readdir(dir)).toEqual([`${id}.json`]);
      const reopened = new FileSessionStore({ dataDir });
      expect((await reopened.get({ tenant: 't/../x', agent: 'alfred' }, id)).messages).toEqual([{ role: 'user', content: 'hi' }]);
    });
  });

  describe('get', () => {
    it('should report a corrupt session file as an internal error', async () => {
      const store = new FileSessionStore({ dataDir });
      const scope = { tenant: 't', agent: 'alfred' };
      const { id } = await store.create(scope);
      await writeFile(join(dataDir, 'sessions', 't', 'alfred', `${id}.json`), '{"half":');

      await expect(store.get(scope, id)).rejects.toMatchObject({ code: ErrorCode.Internal });
    });
  });
});
