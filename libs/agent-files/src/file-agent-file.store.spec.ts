import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentFileStoreContract } from './agent-file-store.contract.js';
import { FileAgentFileStore } from './file-agent-file.store.js';

agentFileStoreContract(FileAgentFileStore.name, describe, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'alfred-agent-files-'));
  return {
    store: new FileAgentFileStore({ dataDir }),
    peer: new FileAgentFileStore({ dataDir }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describe(FileAgentFileStore.name, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'alfred-agent-files-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  describe('write', () => {
    it('should lay out the current file, one file per version and an index', async () => {
      const store = new FileAgentFileStore({ dataDir });
      await store.write({ tenant: 't', agent: 'alfred' }, 'user', 'one', { reason: 'a' });
      await store.write({ tenant: 't', agent: 'alfred' }, 'user', 'two', { reason: 'b' });

      const agentDir = join(dataDir, 'agents', 't', 'alfred');
      expect(await readFile(join(agentDir, 'USER.md'), 'utf8')).toBe('two');
      expect((await readdir(join(agentDir, 'history', 'USER'))).sort()).toEqual(['1.md', '2.md', 'index.json']);
      expect(await readFile(join(agentDir, 'history', 'USER', '1.md'), 'utf8')).toBe('one');
    });
  });
});
